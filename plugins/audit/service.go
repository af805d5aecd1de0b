package audit

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sms-baseline/sms/plugins/orm"
)

type untrack struct {
	id     string
	remove func()
}

type service struct {
	orm    orm.Service
	logger *slog.Logger

	mu      sync.RWMutex
	tracks  map[string]Track // by contribution id
	untrack []untrack
}

var _ Service = (*service)(nil)

// own reports whether model is one of the plugin's.
func own(model string) bool {
	return model == MessageModel || model == ActivityModel || model == FollowerModel
}

// readable fails unless the caller ctx serves may read the record.
func (s *service) readable(ctx context.Context, model string, id int64) error {
	if own(model) {
		return fmt.Errorf("%w: %s records have no thread", ErrInvalid, model)
	}
	if _, err := s.orm.Spec(model); err != nil {
		return fmt.Errorf("%w: unknown model %q", ErrInvalid, model)
	}
	ids, err := s.orm.Search(ctx, model, orm.Domain{[]any{orm.FieldID, "=", id}}, orm.SearchOptions{Limit: 1})
	if err == nil && len(ids) == 1 {
		return nil
	}
	return fmt.Errorf("%w: no record %s/%d that you may read", ErrNotFound, model, id)
}

func on(model string, id int64) orm.Domain {
	return orm.Domain{[]any{"res_model", "=", model}, []any{"res_id", "=", id}}
}

func (s *service) Post(ctx context.Context, model string, id int64, m Message) (int64, error) {
	if m.Kind == "" {
		m.Kind = KindNote
	}
	switch {
	case m.Kind != KindNote && m.Kind != KindComment:
		return 0, fmt.Errorf("%w: a message's kind is %s or %s, got %q", ErrInvalid, KindNote, KindComment, m.Kind)
	case strings.TrimSpace(m.Body) == "":
		return 0, fmt.Errorf("%w: a message needs a body", ErrInvalid)
	case len(m.Body) > MaxBodyLen || !utf8.ValidString(m.Body):
		return 0, fmt.Errorf("%w: a message body is UTF-8 text of at most %d bytes, got %d bytes", ErrInvalid, MaxBodyLen, len(m.Body))
	}
	if err := s.readable(ctx, model, id); err != nil {
		return 0, err
	}
	return s.orm.Create(orm.Sudo(ctx), MessageModel, map[string]any{"res_model": model, "res_id": id, "body": m.Body, "kind": m.Kind})
}

func (s *service) Thread(ctx context.Context, model string, id, before int64) (Thread, error) {
	if err := s.readable(ctx, model, id); err != nil {
		return Thread{}, err
	}
	sudo := orm.Sudo(ctx)
	read := func(m string, d orm.Domain, spec orm.ReadSpec) ([]orm.Record, error) {
		ids, err := s.orm.Search(sudo, m, d, orm.SearchOptions{Limit: MaxPage})
		if err != nil {
			return nil, err
		}
		return s.orm.Read(sudo, m, ids, spec)
	}
	page := on(model, id)
	if before > 0 {
		page = append(page, []any{orm.FieldID, "<", before})
	}
	msgs, err := read(MessageModel, page, orm.ReadSpec{"body": nil, "kind": nil, "tracking": nil, orm.FieldCreatedAt: nil, orm.FieldCreatedBy: nil})
	if err != nil {
		return Thread{}, err
	}
	acts, err := read(ActivityModel, append(on(model, id), []any{"done", "=", false}),
		orm.ReadSpec{"summary": nil, "note": nil, "due": nil, "user_id": nil})
	if err != nil {
		return Thread{}, err
	}
	fol, err := s.followers(sudo, model, id)
	if err != nil {
		return Thread{}, err
	}
	followers := append([]int64{}, slices.Sorted(maps.Keys(fol))...)
	return Thread{Messages: msgs, Followers: followers, Activities: acts}, nil
}

// followers maps each follower of a record to its follower row.
func (s *service) followers(sudo context.Context, model string, id int64) (map[int64]int64, error) {
	ids, err := s.orm.Search(sudo, FollowerModel, on(model, id), orm.SearchOptions{Limit: MaxFollowers + 1})
	if err != nil {
		return nil, err
	}
	recs, err := s.orm.Read(sudo, FollowerModel, ids, orm.ReadSpec{"user_id": nil})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]int64, len(recs))
	for _, r := range recs {
		uid, _ := r["user_id"].(int64)
		rid, _ := r[orm.FieldID].(int64)
		out[uid] = rid
	}
	return out, nil
}

func (s *service) Follow(ctx context.Context, model string, id, userID int64) error {
	if userID < 1 {
		return fmt.Errorf("%w: a follower is a user id from 1, got %d", ErrInvalid, userID)
	}
	if err := s.readable(ctx, model, id); err != nil {
		return err
	}
	sudo := orm.Sudo(ctx)
	have, err := s.followers(sudo, model, id)
	switch {
	case err != nil:
		return err
	case have[userID] != 0:
		return nil
	case len(have) >= MaxFollowers:
		return fmt.Errorf("%w: record %s/%d has %d followers; the limit is %d followers per record", ErrTooMany, model, id, len(have), MaxFollowers)
	}
	_, err = s.orm.Create(sudo, FollowerModel, map[string]any{"res_model": model, "res_id": id, "user_id": userID})
	return err
}

func (s *service) Unfollow(ctx context.Context, model string, id, userID int64) error {
	if err := s.readable(ctx, model, id); err != nil {
		return err
	}
	sudo := orm.Sudo(ctx)
	have, err := s.followers(sudo, model, id)
	if err != nil || have[userID] == 0 {
		return err
	}
	return s.orm.Unlink(sudo, FollowerModel, []int64{have[userID]})
}

func (s *service) Schedule(ctx context.Context, model string, id int64, a Activity) (int64, error) {
	switch {
	case strings.TrimSpace(a.Summary) == "" || len(a.Summary) > MaxSummaryLen:
		return 0, fmt.Errorf("%w: an activity needs a summary of at most %d bytes", ErrInvalid, MaxSummaryLen)
	case len(a.Note) > MaxBodyLen:
		return 0, fmt.Errorf("%w: an activity's note is at most %d bytes", ErrInvalid, MaxBodyLen)
	case a.UserID < 1:
		return 0, fmt.Errorf("%w: an activity is assigned to a user id from 1, got %d", ErrInvalid, a.UserID)
	}
	if err := s.readable(ctx, model, id); err != nil {
		return 0, err
	}
	values := map[string]any{"res_model": model, "res_id": id, "summary": a.Summary, "note": a.Note, "user_id": a.UserID}
	if a.Due != "" {
		values["due"] = a.Due
	}
	return s.orm.Create(orm.Sudo(ctx), ActivityModel, values)
}

// tracking posts one tracking message per record whose tracked fields a
// committed write changed.
func (s *service) tracking(ctx context.Context, c orm.Change) {
	if len(c.Tracked) == 0 {
		return
	}
	s.mu.RLock()
	fields := map[string]bool{}
	for _, t := range s.tracks {
		if t.Model == c.Model {
			for _, f := range t.Fields {
				fields[f] = true
			}
		}
	}
	s.mu.RUnlock()
	sudo := orm.Sudo(orm.WithOp(ctx, c.Op))
	for _, id := range slices.Sorted(maps.Keys(c.Tracked)) {
		var lines []string
		var changes []map[string]any
		for _, f := range slices.Sorted(maps.Keys(c.Tracked[id])) {
			if !fields[f] {
				continue
			}
			t := c.Tracked[id][f]
			old, nw := show(t.Old), show(t.New)
			lines = append(lines, fmt.Sprintf("%s: %s → %s", f, old, nw))
			changes = append(changes, map[string]any{"field": f, "old": cut(t.Old), "new": cut(t.New)})
		}
		if len(lines) == 0 {
			continue
		}
		_, err := s.orm.Create(sudo, MessageModel, map[string]any{"res_model": c.Model, "res_id": id, "kind": KindTracking,
			"body": strings.Join(lines, "\n"), "tracking": changes})
		if err != nil {
			s.logger.Error("Audit: tracking message not posted", "model", c.Model, "id", id, "error", err)
		}
	}
}

// show is a tracked value as a tracking message's body shows it.
func show(v any) string {
	if v == nil {
		return "(none)"
	}
	text, _ := cut(fmt.Sprint(v)).(string)
	return text
}

// cut shortens a string value past MaxTrackedValue bytes (at a rune
// boundary, with an ellipsis), so a tracked text field cannot make a
// message larger than a posted one may be.
func cut(v any) any {
	text, ok := v.(string)
	if !ok || len(text) <= MaxTrackedValue {
		return v
	}
	end := MaxTrackedValue
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[:end] + "…"
}

// cascade unlinks what the plugin holds about records once their unlink
// committed.
func (s *service) cascade(ctx context.Context, c orm.Change) {
	if own(c.Model) || len(c.IDs) == 0 {
		return
	}
	sudo := orm.Sudo(orm.WithOp(ctx, c.Op))
	ids := append([]int64(nil), c.IDs...)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	d := orm.Domain{[]any{"res_model", "=", c.Model}, []any{"res_id", "in", ids}}
	for _, m := range []string{MessageModel, ActivityModel, FollowerModel} {
		for {
			found, err := s.orm.Search(sudo, m, d, orm.SearchOptions{Limit: 1000})
			if err == nil && len(found) > 0 {
				err = s.orm.Unlink(sudo, m, found)
			}
			if err != nil {
				s.logger.Error("Audit: cascade failed", "model", c.Model, "ids", ids, "of", m, "error", err)
			}
			if err != nil || len(found) == 0 {
				break
			}
		}
	}
}
