package collections_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/plugins/collections"
)

// eventLog records hook events for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []collections.HookEvent
}

func (l *eventLog) hook(_ context.Context, e collections.HookEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	return nil
}

func (l *eventLog) take() []collections.HookEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

func rules(log *eventLog) []any {
	inv := func(on collections.Op, when collections.When, fn collections.HookFunc) collections.Hook {
		return collections.Hook{Collection: "invoice", On: on, When: when, Handler: fn}
	}
	return []any{
		inv(collections.OpCreate, collections.WhenBefore, func(_ context.Context, e collections.HookEvent) error {
			if e.Record["amount"].(float64) > 1000 {
				return errors.New("amount over the limit")
			}
			return nil
		}),
		inv(collections.OpCreate, "", func(context.Context, collections.HookEvent) error { return errors.New("after hook broke") }),
		inv(collections.OpCreate, collections.WhenAfter, func(context.Context, collections.HookEvent) error { panic("after hook panicked") }),
		inv(collections.OpUpdate, collections.WhenBefore, log.hook),
		inv(collections.OpUpdate, collections.WhenAfter, log.hook),
		inv(collections.OpDelete, collections.WhenBefore, func(_ context.Context, e collections.HookEvent) error {
			if e.Previous["paid"] == true {
				return errors.New("paid invoices are kept")
			}
			return nil
		}),
		inv(collections.OpDelete, collections.WhenAfter, log.hook),
	}
}

// A failing before hook rejects the write and nothing is written; after
// hooks see the stored record, and their failures (errors or panics) leave
// the write standing. Seen failing with before hooks never run (the
// rejected invoice was stored), and with an after hook's panic not recovered.
func TestHooksBeforeAndAfter(t *testing.T) {
	log := &eventLog{}
	f := boot(t, openSQLite(t), invoiceApp(), app("app.rules", map[string][]any{collections.HookPoint: rules(log)}))

	f.wantError(t, "validation", req{"POST", "/api/collections/invoice", `{"customer":"big","amount":5000}`},
		`collection "invoice": create rejected by a hook of plugin app.rules: amount over the limit`)
	if recs := f.records(t, "invoice"); len(recs) != 0 {
		t.Fatalf("records after a rejected create = %s, want none", jsonOf(recs))
	}
	f.want(t, 201, req{"POST", "/api/collections/invoice", `{"customer":"ada","amount":10}`})

	f.want(t, 200, req{"PATCH", "/api/collections/invoice/1", `{"paid":true}`})
	events := log.take()
	if len(events) != 2 {
		t.Fatalf("update hook events = %s, want before and after", jsonOf(events))
	}
	for i, when := range []collections.When{collections.WhenBefore, collections.WhenAfter} {
		e := events[i]
		if e.When != when || e.On != collections.OpUpdate || e.Record["paid"] != true || e.Previous["paid"] != false ||
			e.Record["customer"] != "ada" || e.Previous["id"] != int64(1) {
			t.Fatalf("update event %d = %s, want %s with record paid true and previous paid false", i, jsonOf(e), when)
		}
	}

	f.wantError(t, "validation", req{"DELETE", "/api/collections/invoice/1", ""}, "paid invoices are kept")
	f.want(t, 200, req{"GET", "/api/collections/invoice/1", ""})
	f.want(t, 200, req{"PATCH", "/api/collections/invoice/1", `{"paid":false}`})
	log.take()
	f.want(t, 204, req{"DELETE", "/api/collections/invoice/1", ""})
	if events := log.take(); len(events) != 1 || events[0].Previous["customer"] != "ada" || events[0].Record != nil {
		t.Fatalf("delete hook events = %s, want one with the deleted record as previous", jsonOf(events))
	}
}

// Hooks of a collection run only for that collection and operation.
// Seen failing with hooksFor ignoring the operation.
func TestHooksMatchCollectionAndOp(t *testing.T) {
	log := &eventLog{}
	other := collections.Collection{Name: "other", Fields: []collections.Field{{Name: "x", Type: collections.TypeText}}}
	f := boot(t, openSQLite(t), invoiceApp(), app("app.watch", map[string][]any{
		collections.CollectionPoint: {other},
		collections.HookPoint:       {collections.Hook{Collection: "invoice", On: collections.OpDelete, Handler: log.hook}},
	}))
	f.want(t, 201, req{"POST", "/api/collections/invoice", `{"customer":"ada","amount":1}`})
	f.want(t, 200, req{"PATCH", "/api/collections/invoice/1", `{"paid":true}`})
	f.want(t, 201, req{"POST", "/api/collections/other", `{"x":"y"}`})
	f.want(t, 204, req{"DELETE", "/api/collections/other/1", ""})
	if events := log.take(); len(events) != 0 {
		t.Fatalf("events of a delete hook on invoice = %s, want none yet", jsonOf(events))
	}
	f.want(t, 204, req{"DELETE", "/api/collections/invoice/1", ""})
	if events := log.take(); len(events) != 1 {
		t.Fatalf("events after deleting the invoice = %s, want one", jsonOf(events))
	}
}

// A hook whose write triggers itself stops at MaxHookDepth instead of
// recursing without bound: after hooks are skipped there (the write at that
// depth stands), before hooks reject the write (and so every write above
// it). Seen failing with the limit in deeper removed (the hook's own
// cut-off at 50 levels ended it).
func TestHookRecursionIsBounded(t *testing.T) {
	for _, when := range []collections.When{collections.WhenAfter, collections.WhenBefore} {
		t.Run(string(when), func(t *testing.T) {
			var svc collections.Service
			calls := 0
			again := func(ctx context.Context, e collections.HookEvent) error {
				if calls++; calls > 50 {
					return nil
				}
				_, err := svc.Create(ctx, "invoice", map[string]any{"customer": "again", "amount": 1.0})
				return err
			}
			f := boot(t, openSQLite(t), invoiceApp(), app("app.loop", map[string][]any{collections.HookPoint: {
				collections.Hook{Collection: "invoice", On: collections.OpCreate, When: when, Handler: again}}}))
			svc = f.svc
			body := `{"customer":"first","amount":1}`
			if when == collections.WhenBefore {
				f.wantError(t, "validation", req{"POST", "/api/collections/invoice", body}, "hooks are nested 8 deep")
				if got := len(f.records(t, "invoice")); got != 0 {
					t.Fatalf("records after a self-triggering before hook = %d, want 0", got)
				}
				return
			}
			f.want(t, 201, req{"POST", "/api/collections/invoice", body})
			if got := len(f.records(t, "invoice")); got != 1+collections.MaxHookDepth {
				t.Fatalf("records after a self-triggering after hook = %d, want %d", got, 1+collections.MaxHookDepth)
			}
		})
	}
}
