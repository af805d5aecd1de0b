package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
)

// BenchmarkPluginToReady applies 100 Plugins to one tenant at once and
// reports, per plugin, the time from its create call returning to the
// operator reporting Judged and Ready (p50 and p95, from a watch). The
// operator polls as it does by default.
//
//	go test -run '^$' -bench PluginToReady -benchtime 1x -count 6 ./controllers/
func BenchmarkPluginToReady(b *testing.B) {
	for range b.N {
		b.StopTimer()
		w := newWorldPolling(b, controllers.DefaultPoll) // the operator's default
		w.tenant("acme", smsv1.TenantJudge{})
		judged, ready := w.timePlugins(100)
		b.StartTimer()
		b.ReportMetric(pct(judged, 50), "judged-p50-ms")
		b.ReportMetric(pct(judged, 95), "judged-p95-ms")
		b.ReportMetric(pct(ready, 50), "ready-p50-ms")
		b.ReportMetric(pct(ready, 95), "ready-p95-ms")
		w.stop()
	}
}

// BenchmarkPluginsAcrossTenants readies 50 tenants, then creates 1000
// Plugins, 20 to each, and reports per plugin the time from its create
// call returning to the operator reporting Judged (p50 and p95), and the
// time from the first create to the last Judged. "apply" creates them one
// after another, as kubectl apply does; "burst" from eight clients at
// once, faster than the operator judges them.
//
//	go test -run '^$' -bench PluginsAcrossTenants -benchtime 1x -count 3 ./controllers/
func BenchmarkPluginsAcrossTenants(b *testing.B) {
	for _, mode := range []struct {
		name     string
		creators int
	}{{"apply", 1}, {"burst", 8}} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				pluginsAcrossTenants(b, mode.creators)
			}
		})
	}
}

func pluginsAcrossTenants(b *testing.B, creators int) {
	const tenants, each = 50, 20
	b.StopTimer()
	w := newWorldPolling(b, controllers.DefaultPoll)
	defer w.stop()
	w.watchUntil(&smsv1.TenantList{}, tenants, func(o client.Object) bool {
		return meta.IsStatusConditionTrue(o.(*smsv1.Tenant).Status.Conditions, smsv1.ConditionReady)
	}, func() {
		for i := range tenants {
			w.must(w.admin.Create(context.Background(), &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%02d", i), Namespace: w.ns}}))
		}
	})
	b.StartTimer()
	start := time.Now()
	var mu sync.Mutex
	created := map[string]time.Time{}
	judgedAt := w.watchUntil(&smsv1.PluginList{}, tenants*each, func(o client.Object) bool {
		p := o.(*smsv1.Plugin)
		return meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionJudged) != nil && p.Status.Verdict != nil
	}, func() {
		var wg sync.WaitGroup
		for c := range creators {
			wg.Go(func() {
				for i := c; i < tenants*each; i += creators {
					name := fmt.Sprintf("p%04d", i)
					p := &smsv1.Plugin{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
						Spec: smsv1.PluginSpec{TenantRef: corev1.LocalObjectReference{Name: fmt.Sprintf("t%02d", i%tenants)},
							ID: "agent." + name, Version: "1", Code: ptr(quietCode)}}
					if err := w.admin.Create(context.Background(), p); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					created[name] = time.Now()
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	})
	b.StopTimer()
	var judged []float64
	last := time.Duration(0)
	for name, at := range judgedAt {
		judged = append(judged, float64(at.Sub(created[name]).Microseconds())/1000)
		last = max(last, at.Sub(start))
	}
	b.ReportMetric(pct(judged, 50), "judged-p50-ms")
	b.ReportMetric(pct(judged, 95), "judged-p95-ms")
	b.ReportMetric(last.Seconds(), "all-judged-s")
}

func ptr[T any](v T) *T { return &v }

// BenchmarkTenantsToReady applies 200 Tenants at once (local runtime) and
// reports the time until every one is Ready. The operator polls as it does
// by default (kernels every 30 s, their event logs every second).
//
//	go test -run '^$' -bench TenantsToReady -benchtime 1x -count 6 ./controllers/
func BenchmarkTenantsToReady(b *testing.B) {
	for range b.N {
		b.StopTimer()
		w := newWorldPolling(b, controllers.DefaultPoll) // the operator's default
		b.StartTimer()
		start := time.Now()
		seen := w.watchUntil(&smsv1.TenantList{}, 200, func(o client.Object) bool {
			t := o.(*smsv1.Tenant)
			return meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady)
		}, func() {
			for i := range 200 {
				w.must(w.admin.Create(context.Background(), &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%03d", i), Namespace: w.ns}}))
			}
		})
		last := time.Duration(0)
		for _, at := range seen {
			last = max(last, at.Sub(start))
		}
		b.ReportMetric(last.Seconds(), "s-all-ready")
		b.StopTimer()
		w.stop()
	}
}

// timePlugins creates n Plugins and returns, in milliseconds, how long each
// took to be Judged and to be Ready.
func (w *world) timePlugins(n int) (judged, ready []float64) {
	created := map[string]time.Time{}
	judgedAt := map[string]time.Time{}
	readyAt := w.watchUntil(&smsv1.PluginList{}, n, func(o client.Object) bool {
		p := o.(*smsv1.Plugin)
		if _, ok := judgedAt[p.Name]; !ok && meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionJudged) != nil &&
			p.Status.Verdict != nil {
			judgedAt[p.Name] = time.Now()
		}
		return meta.IsStatusConditionTrue(p.Status.Conditions, smsv1.ConditionReady)
	}, func() {
		for i := range n {
			name := fmt.Sprintf("p%03d", i)
			w.plugin(w.admin, name, "agent."+name, quietCode)
			created[name] = time.Now()
		}
	})
	for name, at := range readyAt {
		judged = append(judged, float64(judgedAt[name].Sub(created[name]).Microseconds())/1000)
		ready = append(ready, float64(at.Sub(created[name]).Microseconds())/1000)
	}
	return judged, ready
}

// watchUntil watches list's kind in the world's namespace, runs act beside the watch, and
// returns when done(obj) first held for each of n objects, and when. A
// watch the server closes (it does under a burst of changes) is resumed
// from a fresh list, whose objects are judged as seen at that moment.
func (w *world) watchUntil(list client.ObjectList, n int, done func(client.Object) bool, act func()) map[string]time.Time {
	w.t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	w.must(err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	at := map[string]time.Time{}
	see := func(o client.Object) {
		if _, ok := at[o.GetName()]; !ok && done(o) {
			at[o.GetName()] = time.Now()
		}
	}
	watcher, err := wc.Watch(ctx, list, client.InNamespace(w.ns))
	w.must(err)
	defer func() { watcher.Stop() }()
	// act runs beside the watch, so that an object's time is when the
	// watch delivered it, not when act ended.
	acting := make(chan struct{})
	go func() {
		defer close(acting)
		act()
	}()
	defer func() { <-acting }()
	actDone := acting
	for len(at) < n {
		select {
		case <-actDone:
			actDone = nil
			if w.t.Failed() {
				w.t.FailNow() // act failed (its Fatal ended only its goroutine)
			}
		case ev, open := <-watcher.ResultChan():
			if !open {
				watcher = w.rewatch(ctx, wc, list, see)
				continue
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				see(ev.Object.(client.Object))
			}
		case <-ctx.Done():
			w.t.Fatalf("only %d of %d objects got there", len(at), n)
		}
	}
	return at
}

// rewatch lists list's kind, shows each object to see, and watches from
// the list's resource version.
func (w *world) rewatch(ctx context.Context, wc client.WithWatch, list client.ObjectList, see func(client.Object)) watch.Interface {
	w.t.Helper()
	fresh := list.DeepCopyObject().(client.ObjectList)
	w.must(wc.List(ctx, fresh, client.InNamespace(w.ns)))
	items, err := meta.ExtractList(fresh)
	w.must(err)
	for _, item := range items {
		see(item.(client.Object))
	}
	watcher, err := wc.Watch(ctx, list, client.InNamespace(w.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: fresh.GetResourceVersion()}})
	w.must(err)
	return watcher
}

// pct returns the p-th percentile of values.
func pct(values []float64, p int) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)-1)*p/100]
}
