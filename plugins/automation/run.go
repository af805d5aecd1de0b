package automation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sms-baseline/sms/plugins/audit"
	"github.com/sms-baseline/sms/plugins/orm"
)

// chainKey carries the automations a run is nested in, outermost first.
type chainKey struct{}

func chainOf(ctx context.Context) []string {
	c, _ := ctx.Value(chainKey{}).([]string)
	return c
}

// fire runs the automations a committed write triggers.
func (s *service) fire(ctx context.Context, c orm.Change) {
	chain := chainOf(ctx)
	for _, l := range s.matching(c.Model, Trigger(c.Event)) {
		if slices.Contains(chain, l.a.Name) {
			continue // never re-enters itself
		}
		ids := c.IDs
		if len(l.a.Watch) > 0 {
			ids = watched(c, l.a.Watch)
		}
		if len(ids) == 0 {
			continue
		}
		if len(chain) >= MaxChainDepth {
			l.st.mu.Lock()
			l.st.status.Skipped++
			l.st.status.LastError = fmt.Sprintf("skipped: automations nested %d deep (%v); the limit is %d", len(chain), chain, MaxChainDepth)
			l.st.mu.Unlock()
			s.logger.Warn("Automation skipped: chain too deep", "automation", l.a.Name, "chain", chain)
			continue
		}
		ev := Event{Automation: l.a.Name, Model: c.Model, Trigger: l.a.Trigger, IDs: ids, Values: c.Values, Tracked: c.Tracked, Now: s.now()}
		if l.q == nil {
			s.run(ctx, l, ev, c.Op)
			continue
		}
		if !l.q.push(job{ctx: context.WithoutCancel(ctx), ev: ev, writer: c.Op}) {
			l.st.mu.Lock()
			l.st.status.Dropped++
			l.st.mu.Unlock()
			s.logger.Warn("Automation run dropped: its queue is full", "automation", l.a.Name, "plugin", l.plugin, "limit", MaxQueue)
		}
	}
}

// watched is the records whose stored value of a watched field changed.
func watched(c orm.Change, watch []string) []int64 {
	var out []int64
	for _, id := range c.IDs {
		for _, f := range watch {
			if _, ok := c.Tracked[id][f]; ok {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// acting is the context a run of l acts with: sudo when it says so, the
// writer for a system plugin's, the person who asked for an agent
// plugin's (never sudo), as a call of the agent plugin's that its budget
// admits and that the rows it writes and its time count against (done
// reports the time).
func (s *service) acting(ctx context.Context, l *live, writer orm.OpContext) (_ context.Context, done func(), _ error) {
	writer.Sudo = false
	switch {
	case l.a.Sudo && l.system:
		return orm.Sudo(orm.WithOp(ctx, writer)), func() {}, nil
	case l.system:
		return orm.WithOp(ctx, writer), func() {}, nil
	case s.actAs != nil:
		ctx = s.actAs(ctx, l.plugin)
	}
	ctx, done, err := s.api.ActFor(ctx, l.plugin)
	return orm.WithoutOp(ctx), done, err
}

// run runs l once on ev's records (narrowed by the filter) and records
// the outcome.
func (s *service) run(ctx context.Context, l *live, ev Event, writer orm.OpContext) {
	ctx, done, err := s.acting(ctx, l, writer)
	defer done()
	if err != nil {
		l.fail(err, ev.Now)
		s.logger.Warn("Automation refused", "automation", l.a.Name, "plugin", l.plugin, "error", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ctx = context.WithValue(ctx, chainKey{}, append(slices.Clone(chainOf(ctx)), l.a.Name))
	err = s.narrowAndAct(ctx, l, &ev)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("ran past its limit of %s: %w", s.timeout, err)
	}
	if err != nil {
		l.fail(err, ev.Now)
		s.logger.Warn("Automation failed", "automation", l.a.Name, "plugin", l.plugin, "error", err)
		return
	}
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	l.st.status.Runs++
	l.st.status.LastError = ""
	l.st.status.LastRun = &ev.Now
}

func (l *live) fail(err error, now time.Time) {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	l.st.status.Runs++
	l.st.status.Failures++
	l.st.status.LastError = err.Error()
	l.st.status.LastRun = &now
}

// An agent plugin's automation always narrows the records to those its
// requester may read, filter or none, and sees the tracked changes of
// those only: it never hears of another user's writes.
func (s *service) narrowAndAct(ctx context.Context, l *live, ev *Event) error {
	if (l.a.Filter != nil || !l.system) && l.a.Trigger != OnUnlink {
		d := append(orm.Domain{[]any{orm.FieldID, "in", ev.IDs}}, l.a.Filter...)
		ids, err := s.orm.Search(ctx, l.a.Model, d, orm.SearchOptions{Limit: MaxRecords})
		if err != nil {
			return fmt.Errorf("filter: %w", err)
		}
		if ev.IDs = ids; len(ids) == 0 {
			return nil
		}
		ev.Tracked = only(ev.Tracked, ids)
	}
	if len(ev.IDs) > MaxRecords {
		ev.IDs = ev.IDs[:MaxRecords]
	}
	return s.act(ctx, l, *ev)
}

// act does l's action on ev's records.
func (s *service) act(ctx context.Context, l *live, ev Event) error {
	a := l.a.Action
	switch a.Kind {
	case ActMethod:
		if !l.system { // as agent code calls it: on records the requester may write
			ids := make([]any, len(ev.IDs)) // the JSON shape agent code sends
			for i, id := range ev.IDs {
				ids[i] = float64(id)
			}
			_, err := s.user.Invoke(ctx, "call", []any{l.a.Model, a.Method, ids, a.Args})
			return err
		}
		_, err := s.orm.Call(ctx, l.a.Model, orm.MethodRequest{Method: a.Method, IDs: ev.IDs, Args: a.Args})
		return err
	case ActWrite:
		return s.orm.Write(ctx, l.a.Model, ev.IDs, a.Values)
	case ActNote:
		v, err := s.api.GetValue(audit.Key)
		if err != nil {
			return nil // without audit a note is a no-op
		}
		svc, _ := v.(audit.Service)
		var errs []error
		for _, id := range ev.IDs {
			if _, err := svc.Post(ctx, l.a.Model, id, audit.Message{Body: a.Body, Kind: audit.KindNote}); err != nil {
				errs = append(errs, fmt.Errorf("note on %s/%d: %w", l.a.Model, id, err))
			}
		}
		return errors.Join(errs...)
	case ActHandler:
		return callHandler(ctx, a.Handler, ev)
	}
	return fmt.Errorf("unknown action kind %q", a.Kind)
}

func callHandler(ctx context.Context, h Handler, ev Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h(ctx, ev)
}

// only is tracked cut to the records ids.
func only(tracked map[int64]map[string]orm.Tracked, ids []int64) map[int64]map[string]orm.Tracked {
	if tracked == nil {
		return nil
	}
	out := make(map[int64]map[string]orm.Tracked, len(ids))
	for _, id := range ids {
		if t, ok := tracked[id]; ok {
			out[id] = t
		}
	}
	return out
}
