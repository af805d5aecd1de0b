package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
)

// Plugin returns the audit system plugin: it injects the ORM and http
// (and rbac when opts.Group is set), declares its three models, defines
// Key and TrackPoint, and serves the routes under RoutePrefix.
func Plugin(opts Options) kernel.Plugin {
	m := kernel.Manifest{ID: PluginID, Version: "1",
		Inject:      []string{orm.Key, smshttp.Key},
		Provide:     []string{Key},
		Points:      []string{smshttp.RoutePoint, orm.ModelPoint},
		Description: "Messages, followers and activities on records, and tracked fields"}
	if opts.Group != "" {
		m.Inject = append(m.Inject, rbac.Key)
		m.Points = append(m.Points, rbac.AccessPoint, rbac.RulePoint)
	}
	return kernel.Plugin{Manifest: m, Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) }}
}

// models are the plugin's models; user references are plain ints.
func models() []orm.Model {
	ref := map[string]orm.Field{
		"res_model": {Kind: orm.KindChar, Required: true},
		"res_id":    {Kind: orm.KindInt, Required: true},
	}
	with := func(extra map[string]orm.Field) map[string]orm.Field {
		out := map[string]orm.Field{}
		for k, v := range ref {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	return []orm.Model{
		{Name: MessageModel, Description: "a message on a record", DisplayField: "kind", Order: "id desc", Fields: with(map[string]orm.Field{
			"body": {Kind: orm.KindText},
			"kind": {Kind: orm.KindSelection, Required: true, Default: KindNote,
				Options: []orm.Option{{Value: KindNote}, {Value: KindComment}, {Value: KindTracking}}},
			"tracking": {Kind: orm.KindJSON},
		})},
		{Name: ActivityModel, Description: "something to do about a record", DisplayField: "summary", Order: "due, id", Fields: with(map[string]orm.Field{
			"summary": {Kind: orm.KindChar, Required: true},
			"note":    {Kind: orm.KindText},
			"due":     {Kind: orm.KindDate},
			"user_id": {Kind: orm.KindInt, Required: true},
			"done":    {Kind: orm.KindBool, Default: false},
		})},
		{Name: FollowerModel, Description: "a user who follows a record", DisplayField: "res_model", Fields: with(map[string]orm.Field{
			"user_id": {Kind: orm.KindInt, Required: true},
		})},
	}
}

func activate(c *kernel.Context, opts Options) error {
	o, err := kernel.Lookup[orm.Service](c, orm.Key)
	if err != nil {
		return err
	}
	for _, m := range models() {
		if _, err := c.Contribute(orm.ModelPoint, m); err != nil {
			return err
		}
	}
	if opts.Group != "" {
		if err := grant(c, opts.Group); err != nil {
			return err
		}
	}
	s := &service{orm: o, logger: c.Logger(), tracks: map[string]Track{}}
	api := c.Kernel()
	if err := errors.Join(
		api.DefineKey(Key, kernel.KeyMeta{Description: "post messages on records (audit.Service)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
		api.DefinePoint(TrackPoint, kernel.PointMeta{Description: "audit.Track{model, fields}: fields whose changes post a tracking message",
			MinContributorTrust: kernel.TrustAgent, Validate: s.checkTrack, Requires: []string{contracts.CapDBSchema}}),
		api.ObservePoint(TrackPoint, kernel.Observer{Added: s.addTrack, Removed: s.dropTrack}),
	); err != nil {
		return err
	}
	for _, l := range []struct {
		on orm.Event
		fn orm.Listener
	}{{orm.EventWrite, s.tracking}, {orm.EventUnlink, s.cascade}} {
		remove := o.On(l.on, l.fn)
		if err := c.OnUndo("audit listener", func() error { remove(); return nil }); err != nil {
			return err
		}
	}
	for _, r := range (routes{s: s, users: opts.Users}).list() {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return c.Provide(Key, Service(s))
}

// grant contributes group's read of activities and the "own activities"
// rule. Messages and followers get no ORM access: a message belongs to any
// model's record, which no rule on audit_message could check, so they are
// served by the thread route alone, which checks the record.
func grant(c *kernel.Context, group string) error {
	items := []struct {
		point string
		item  any
	}{
		{rbac.AccessPoint, rbac.Access{Group: group, Model: ActivityModel, Read: true}},
		{rbac.RulePoint, rbac.Rule{Name: "own activities", Model: ActivityModel, Groups: []string{group},
			Domain: orm.Domain{[]any{"user_id", "=", rbac.UID}}}},
	}
	for _, it := range items {
		if _, err := c.Contribute(it.point, it.item); err != nil {
			return fmt.Errorf("audit group %s: %w", group, err)
		}
	}
	return nil
}

func (s *service) checkTrack(item any) error {
	t, err := kernel.ItemAs[Track](item, "an audit track is {model, fields}")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(t.Fields) == 0 || len(t.Fields) > MaxTrackFields {
		return fmt.Errorf("%w: an audit track lists 1 to %d fields, got %d", ErrInvalid, MaxTrackFields, len(t.Fields))
	}
	spec, err := s.orm.Spec(t.Model)
	if err != nil {
		return fmt.Errorf("%w: audit track: unknown model %q", ErrInvalid, t.Model)
	}
	for _, f := range t.Fields {
		i := slices.IndexFunc(spec.Fields, func(fs orm.FieldSpec) bool { return fs.Name == f })
		switch {
		case i < 0:
			return fmt.Errorf("%w: audit track: model %s has no field %q", ErrInvalid, t.Model, f)
		case !spec.Fields[i].Stored || spec.Fields[i].ReadOnly || spec.Fields[i].Kind == orm.KindOne2Many || spec.Fields[i].Kind == orm.KindMany2Many:
			return fmt.Errorf("%w: audit track: field %s of %s is not a stored scalar field, so its changes cannot be tracked", ErrInvalid, f, t.Model)
		}
	}
	return nil
}

func (s *service) addTrack(x kernel.Contribution) {
	t, err := kernel.ItemAs[Track](x.Item, "an audit track")
	if err != nil {
		return // validated before it was accepted
	}
	remove := s.orm.Track(t.Model, t.Fields)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracks[x.ID] = t
	s.untrack = append(s.untrack, untrack{id: x.ID, remove: remove})
}

func (s *service) dropTrack(x kernel.Contribution) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tracks, x.ID)
	s.untrack = slices.DeleteFunc(s.untrack, func(u untrack) bool {
		if u.id == x.ID {
			u.remove()
		}
		return u.id == x.ID
	})
}
