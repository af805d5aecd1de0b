package controllers

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// Watchers follow each ready kernel's event stream, one goroutine per
// tenant, and wake what an event concerns: the Plugins standing for the
// event's plugin, the tenant (whose reconcile counts its plugins) and the
// tenant's Mirror.
// A watcher that loses its stream reconnects with backoff and resumes
// after the last event it saw; a hung kernel stalls only its own watcher.
type Watchers struct {
	d *Deps
	// Idle is how long a silent stream is trusted; default
	// adminv1.StreamIdle.
	Idle time.Duration

	plugins chan event.TypedGenericEvent[*smsv1.Plugin]
	tenants chan event.TypedGenericEvent[*smsv1.Tenant]
	mirrors chan event.TypedGenericEvent[*smsv1.Tenant]

	base   context.Context
	stop   context.CancelFunc
	mu     sync.Mutex
	active map[types.NamespacedName]*watcher
}

// watcher is one tenant's stream.
type watcher struct {
	endpoint, token string
	cancel          context.CancelFunc
	mu              sync.Mutex
	after           int64
	down            error     // why the stream is not open; nil while it is
	tenantWoken     time.Time // when an event last woke the tenant
	tenantDue       bool      // a wake of the tenant is scheduled
}

// NewWatchers returns the watchers; Start ties them to the manager.
func NewWatchers(d *Deps) *Watchers {
	base, stop := context.WithCancel(context.Background())
	return &Watchers{d: d, base: base, stop: stop, active: map[types.NamespacedName]*watcher{},
		plugins: make(chan event.TypedGenericEvent[*smsv1.Plugin], 1024),
		tenants: make(chan event.TypedGenericEvent[*smsv1.Tenant], 1024),
		mirrors: make(chan event.TypedGenericEvent[*smsv1.Tenant], 1024)}
}

// Start waits for the manager to stop, then stops every watcher. It
// implements manager.Runnable; like the controllers it runs only while
// this process leads, so it also records when that began (statusMemo.lead).
func (w *Watchers) Start(ctx context.Context) error {
	w.d.memo.lead(time.Now())
	<-ctx.Done()
	w.stop()
	return nil
}

// Ensure follows t's kernel at endpoint with token, unless a watcher
// already does. A watcher of another endpoint or token is replaced; one
// for the same kernel resumes where the old one stopped.
func (w *Watchers) Ensure(t *smsv1.Tenant, endpoint, token string) {
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.active[key]
	if old != nil && old.endpoint == endpoint && old.token == token {
		return
	}
	ctx, cancel := context.WithCancel(w.base)
	cur := &watcher{endpoint: endpoint, token: token, cancel: cancel}
	if old != nil {
		old.cancel()
		if old.endpoint == endpoint {
			cur.after = old.seen()
		}
	}
	w.active[key] = cur
	kc := adminv1.New(endpoint, token, w.d.HTTP)
	go w.run(ctx, key, kc, cur)
}

// Stop ends the tenant's watcher, if any.
func (w *Watchers) Stop(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur := w.active[key]; cur != nil {
		cur.cancel()
		delete(w.active, key)
	}
}

// Down returns why the tenant's kernel event stream is not open, or nil
// while it is (or before its first attempt). Callers fail fast on a down
// kernel instead of holding a worker for a request's timeout; the
// reconnect wakes everything of the tenant.
func (w *Watchers) Down(key types.NamespacedName) error {
	w.mu.Lock()
	cur := w.active[key]
	w.mu.Unlock()
	if cur == nil {
		return nil
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	return cur.down
}

func (c *watcher) seen() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.after
}

// Backoff bounds of a watcher's reconnects.
const (
	minBackoff = 200 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// run follows the stream until ctx ends, reconnecting with backoff.
func (w *Watchers) run(ctx context.Context, key types.NamespacedName, kc *adminv1.Client, cur *watcher) {
	backoff := minBackoff
	open := func() {
		cur.mu.Lock()
		wasDown := cur.down != nil
		cur.down = nil
		cur.mu.Unlock()
		if wasDown {
			w.wakeAll(ctx, key) // what failed fast while it was down tries again
		}
	}
	for ctx.Err() == nil {
		err := kc.Follow(ctx, adminv1.FollowOptions{After: cur.seen(), Idle: w.Idle, Open: open}, func(e adminv1.Event) error {
			if err := w.deliver(ctx, key, cur, e); err != nil {
				return err // resume at this event, not after it
			}
			cur.mu.Lock()
			cur.after = e.Seq
			cur.mu.Unlock()
			backoff = minBackoff
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		cur.mu.Lock()
		cur.down = err
		cur.mu.Unlock()
		log.FromContext(ctx).V(1).Info("Kernel event stream ended; reconnecting", "tenant", key, "error", err, "after", backoff)
		w.wakeTenant(ctx, key) // its reconcile checks the kernel's health
		jitter := time.Duration(rand.Int64N(int64(backoff) / 2))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff + jitter):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// deliver wakes the Plugins of the event's plugin, the tenant (at most
// once per countsInterval, see wakeTenantSoon) and its mirror, unless
// only Plugins from git stand for the event's plugin: the mirror leaves
// those alone, so their events cannot change what it writes.
func (w *Watchers) deliver(ctx context.Context, key types.NamespacedName, cur *watcher, e adminv1.Event) error {
	mirror := true // the event's plugin has no Plugin, or an agent-made one
	if e.Plugin != "" {
		plugins, err := w.d.pluginsOf(ctx, key.Namespace, indexPluginKernelID, kernelID(key.Name, e.Plugin))
		if err != nil {
			return err
		}
		mirror = len(plugins) == 0
		for i := range plugins {
			if agentMade(&plugins[i]) {
				mirror = true
			}
			select {
			case w.plugins <- event.TypedGenericEvent[*smsv1.Plugin]{Object: &plugins[i]}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	w.wakeTenantSoon(ctx, key, cur)
	if mirror {
		w.wakeMirror(ctx, key)
	}
	return nil
}

// wakeTenantSoon wakes the tenant for a kernel event: at once when no
// event woke it within countsInterval, else once when that interval ends,
// however many events come meanwhile. What an event changes in a Tenant's
// status is its plugin counts, taint and users, and the counts are
// written at most that often anyway; each wake reads the kernel's whole
// state, so a burst of mounts costs a tenant one read per interval, not
// one per mount.
func (w *Watchers) wakeTenantSoon(ctx context.Context, key types.NamespacedName, cur *watcher) {
	cur.mu.Lock()
	if cur.tenantDue {
		cur.mu.Unlock()
		return
	}
	wait := countsInterval - time.Since(cur.tenantWoken)
	if wait <= 0 {
		cur.tenantWoken = time.Now()
		cur.mu.Unlock()
		w.wakeTenant(ctx, key)
		return
	}
	cur.tenantDue = true
	cur.mu.Unlock()
	time.AfterFunc(wait, func() {
		cur.mu.Lock()
		cur.tenantDue, cur.tenantWoken = false, time.Now()
		cur.mu.Unlock()
		// Not the watcher's context: a watcher replaced meanwhile resumes
		// after the events this wake stands for.
		w.wakeTenant(w.base, key)
	})
}

// wakeAll wakes every Plugin of the tenant, and its mirror.
func (w *Watchers) wakeAll(ctx context.Context, key types.NamespacedName) {
	w.wakeMirror(ctx, key)
	plugins, err := w.d.pluginsOf(ctx, key.Namespace, indexPluginTenant, key.Name)
	if err != nil {
		return
	}
	for i := range plugins {
		select {
		case w.plugins <- event.TypedGenericEvent[*smsv1.Plugin]{Object: &plugins[i]}:
		case <-ctx.Done():
			return
		}
	}
}

func (w *Watchers) wakeTenant(ctx context.Context, key types.NamespacedName) {
	wake(ctx, w.tenants, key)
}

func (w *Watchers) wakeMirror(ctx context.Context, key types.NamespacedName) {
	wake(ctx, w.mirrors, key)
}

// wake sends Tenant key to a controller's channel.
func wake(ctx context.Context, ch chan<- event.TypedGenericEvent[*smsv1.Tenant], key types.NamespacedName) {
	t := &smsv1.Tenant{}
	t.Namespace, t.Name = key.Namespace, key.Name
	select {
	case ch <- event.TypedGenericEvent[*smsv1.Tenant]{Object: t}:
	case <-ctx.Done():
	}
}
