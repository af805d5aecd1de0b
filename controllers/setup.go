package controllers

import (
	"context"
	"maps"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
)

// Options configure the controllers.
type Options struct {
	// Runtime runs the kernels.
	Runtime kernelruntime.Runtime
	// OwnsStatefulSets watches the StatefulSets the kubernetes runtime
	// creates, so a kernel pod's readiness reconciles its tenant at once.
	OwnsStatefulSets bool
	// Poll is how often a tenant's kernel is checked when nothing else
	// triggers a reconcile: a resync, since each kernel's event stream
	// wakes what changed. Default 5 minutes.
	Poll time.Duration
	// StreamIdle is how long a silent kernel event stream is trusted
	// before the watcher reconnects. Default adminv1.StreamIdle.
	StreamIdle time.Duration
}

// Setup registers the Tenant, Mirror, Plugin and Approval controllers,
// the field indexes they read through, and the kernels' event watchers.
func Setup(mgr ctrl.Manager, opts Options) error {
	d := &Deps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("sms-operator"),
		HTTP: &http.Client{Timeout: 30 * time.Second}, Poll: opts.Poll}
	if err := addIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	watchers := NewWatchers(d)
	watchers.Idle = opts.StreamIdle
	d.Streams = watchers
	if err := mgr.Add(watchers); err != nil {
		return err
	}
	tenants := ctrl.NewControllerManagedBy(mgr).For(&smsv1.Tenant{}).Named("tenant").
		Owns(&corev1.Secret{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(d.referencing("secret"))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(d.referencing("configmap"))).
		WatchesRawSource(source.Channel(watchers.tenants, &handler.TypedEnqueueRequestForObject[*smsv1.Tenant]{}))
	if opts.OwnsStatefulSets {
		tenants = tenants.Owns(&appsv1.StatefulSet{})
	}
	tenants = tenants.WithOptions(controller.Options{MaxConcurrentReconciles: 4})
	if err := tenants.Complete(&TenantReconciler{Deps: d, Runtime: opts.Runtime, Watchers: watchers}); err != nil {
		return err
	}
	err := ctrl.NewControllerManagedBy(mgr).For(&smsv1.Tenant{}, builder.WithPredicates(kernelMoved)).Named("mirror").
		Watches(&smsv1.Plugin{}, handler.EnqueueRequestsFromMapFunc(pluginTenant), builder.WithPredicates(mirrored)).
		WatchesRawSource(source.Channel(watchers.mirrors, &handler.TypedEnqueueRequestForObject[*smsv1.Tenant]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(&Mirror{Deps: d})
	if err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&smsv1.Plugin{}, builder.WithPredicates(pluginChanged)).Named("plugin").
		Owns(&smsv1.Approval{}).
		Watches(&smsv1.Tenant{}, handler.EnqueueRequestsFromMapFunc(d.tenantPlugins), builder.WithPredicates(kernelMoved)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(d.configMapPlugins)).
		WatchesRawSource(source.Channel(watchers.plugins, &handler.TypedEnqueueRequestForObject[*smsv1.Plugin]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(&PluginReconciler{Deps: d})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).For(&smsv1.Approval{}).Named("approval").
		Watches(&smsv1.Plugin{}, handler.EnqueueRequestsFromMapFunc(d.pluginApprovals)).
		Complete(&ApprovalReconciler{Deps: d})
}

// kernelMoved passes Tenant events that matter to its plugins and its
// mirror: the kernel became ready or unready, or moved. Plugin counts changing (on
// every mount) must not wake every plugin of the tenant.
var kernelMoved = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*smsv1.Tenant)
		cur, okNew := e.ObjectNew.(*smsv1.Tenant)
		if !okOld || !okNew {
			return true
		}
		ready := func(t *smsv1.Tenant) bool {
			return meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady)
		}
		return ready(old) != ready(cur) || old.Status.Endpoint != cur.Status.Endpoint ||
			old.Spec.Judge.ForbidSelfApproval != cur.Spec.Judge.ForbidSelfApproval
	},
}

// pluginChanged passes Plugin events a reconcile must see: creation,
// deletion, and updates to what it was asked (spec, labels, annotations,
// owners, a deletion starting). Updates to its status and finalizers are
// the reconciler's own writes, made at the end of a reconcile that already
// acted on everything they record: waking it again for them only repeats
// that work.
var pluginChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld, e.ObjectNew
		return old.GetGeneration() != cur.GetGeneration() ||
			!maps.Equal(old.GetLabels(), cur.GetLabels()) ||
			!maps.Equal(old.GetAnnotations(), cur.GetAnnotations()) ||
			!equality.Semantic.DeepEqual(old.GetOwnerReferences(), cur.GetOwnerReferences()) ||
			old.GetDeletionTimestamp().IsZero() != cur.GetDeletionTimestamp().IsZero()
	},
}

// mirrored passes the Plugin events that can change what the mirror
// writes: every deletion, and every change of spec or labels (a plugin a
// Plugin from git no longer declares, for its tenant or at all, may be
// the mirror's to show), and the creation and updates of a Plugin that is
// or was agent-made. The creation and status writes of a Plugin from git
// cannot: the mirror leaves those Plugins alone.
var mirrored = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return agentMade(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld, e.ObjectNew
		return agentMade(old) || agentMade(cur) || old.GetGeneration() != cur.GetGeneration() ||
			!maps.Equal(old.GetLabels(), cur.GetLabels())
	},
}

// agentMade reports whether o carries the agent origin label.
func agentMade(o client.Object) bool {
	return o != nil && o.GetLabels()[smsv1.LabelOrigin] == string(smsv1.OriginAgent)
}

// pluginTenant maps a Plugin to its Tenant, for the mirror.
func pluginTenant(_ context.Context, o client.Object) []reconcile.Request {
	p, ok := o.(*smsv1.Plugin)
	if !ok {
		return nil
	}
	return tenantRequest(p.Namespace, p.Spec.TenantRef.Name)
}

// referencing maps a Secret or ConfigMap (kind "secret" or "configmap")
// to the Tenants that reference it, so a rotated model key or a new
// script reaches their kernels.
func (d *Deps) referencing(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list smsv1.TenantList
		err := d.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexTenantRefs: kind + "/" + o.GetName()})
		if err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// tenantPlugins maps a Tenant to its Plugins.
func (d *Deps) tenantPlugins(ctx context.Context, o client.Object) []reconcile.Request {
	return d.requests(ctx, o.GetNamespace(), indexPluginTenant, o.GetName())
}

// configMapPlugins maps a ConfigMap to the Plugins reading code from it.
func (d *Deps) configMapPlugins(ctx context.Context, o client.Object) []reconcile.Request {
	return d.requests(ctx, o.GetNamespace(), indexPluginCodeFrom, o.GetName())
}

// requests are the Plugins in ns whose indexed field is value.
func (d *Deps) requests(ctx context.Context, ns, field, value string) []reconcile.Request {
	plugins, err := d.pluginsOf(ctx, ns, field, value)
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(plugins))
	for i := range plugins {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&plugins[i])})
	}
	return out
}

// pluginApprovals maps a Plugin to its Approvals, so a code change
// expires the old ones and a pending submission finds a pre-approved one.
func (d *Deps) pluginApprovals(ctx context.Context, o client.Object) []reconcile.Request {
	approvals, err := d.approvalsOf(ctx, o.GetNamespace(), o.GetName())
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(approvals))
	for i := range approvals {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&approvals[i])})
	}
	return out
}
