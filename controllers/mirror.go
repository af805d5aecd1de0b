package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// MirrorFieldOwner is the field manager the mirror writes agent-made
// Plugins with.
const MirrorFieldOwner = "sms-mirror"

// Mirror keeps one Plugin object, labelled sms.dev/origin=agent, for every
// agent plugin a kernel runs or holds for approval. It is a controller of
// its own, reconciling a Tenant's agent plugins: the kernel's event
// stream (Watchers), the Tenant becoming ready and its Plugins changing
// wake it. For those Plugins the
// kernel owns the spec: the mirror writes what the kernel has (field
// owner sms-mirror, onto the version it read) whenever it changes, and deletes the
// Plugin when the kernel uninstalled the plugin. A person's edit of such a
// spec is pushed to the kernel first (by the Plugin reconciler) and only
// then mirrored back. Plugins from git (no origin label) are never
// touched: there the spec owns the kernel.
type Mirror struct {
	*Deps
}

// kernelCopy is what a kernel holds of one agent plugin.
type kernelCopy struct {
	fiber   *adminv1.Fiber
	pending *adminv1.Approval // the newest submission waiting for a human
}

// hashVersion is the code hash and version of the submission the
// Plugin's spec should show: the one waiting for a human when there is
// one, else the installed one.
func (c kernelCopy) hashVersion() (string, string) {
	if c.pending != nil {
		return c.pending.CodeHash, c.pending.Manifest.Version
	}
	return c.fiber.CodeHash, c.fiber.Version
}

func (c kernelCopy) enabled() bool { return c.fiber == nil || c.fiber.Enabled }

// Reconcile implements reconcile.Reconciler for one Tenant: it mirrors
// the agent plugins of the tenant's kernel, once the Tenant is ready.
// What wakes it (an event of the kernel's stream, the stream reopening,
// the Tenant turning ready or moving, one of its Plugins changing) is
// what can change the mirror; nothing polls.
func (m *Mirror) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var t smsv1.Tenant
	if err := m.Client.Get(ctx, req.NamespacedName, &t); err != nil {
		return ctrl.Result{}, ignoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() || t.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	kc, err := m.kernelFor(ctx, &t)
	if err != nil {
		return ctrl.Result{}, nil // the Tenant turning ready, or its stream reopening, wakes this
	}
	probe, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	state, err := kc.State(probe)
	if err != nil {
		// The Tenant reports its kernel's health; this tries again soon.
		log.FromContext(ctx).V(1).Info("Kernel state unreadable; mirroring later", "tenant", t.Name, "error", err)
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	if err := m.Sync(ctx, &t, kc, state); err != nil {
		log.FromContext(ctx).Error(err, "Mirror agent plugins", "tenant", t.Name)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	// No resync: an idle kernel is asked nothing more than its Tenant's
	// health check. Its event stream, and the stream reopening after it
	// was down, wake this.
	return ctrl.Result{}, nil
}

// Sync mirrors the kernel's agent plugins into tenant t's namespace.
func (m *Mirror) Sync(ctx context.Context, t *smsv1.Tenant, kc *adminv1.Client, s adminv1.State) error {
	objs, err := m.pluginsOf(ctx, t.Namespace, indexPluginTenant, t.Name)
	if err != nil {
		return err
	}
	agent, git := map[string]*smsv1.Plugin{}, map[string]bool{}
	for i := range objs {
		p := &objs[i]
		if p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) {
			agent[p.Spec.ID] = p
		} else {
			git[p.Spec.ID] = true
		}
	}
	copies := map[string]kernelCopy{}
	for i := range s.Fibers {
		if f := &s.Fibers[i]; f.Trust == adminv1.TrustAgent {
			copies[f.ID] = kernelCopy{fiber: f}
		}
	}
	for i := range s.Pending {
		a := &s.Pending[i]
		c := copies[a.PluginID]
		if c.pending == nil || a.Requested.After(c.pending.Requested) {
			c.pending = a
		}
		copies[a.PluginID] = c
	}
	// One plugin that fails to mirror holds up no other: the errors are
	// joined, and a conflict (the cache was behind) is left to the next sync.
	sync := &tenantSync{Mirror: m, t: t, kc: kc}
	var errs []error
	for id, c := range copies {
		if git[id] {
			continue // git owns this plugin; the Plugin reconciler puts its spec back
		}
		if err := sync.mirror(ctx, agent[id], c); err != nil && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	for id, p := range agent {
		if _, ok := copies[id]; !ok {
			errs = append(errs, m.gone(ctx, p))
		}
	}
	return errors.Join(errs...)
}

// tenantSync is one Sync: the tenant and a client for its kernel.
type tenantSync struct {
	*Mirror
	t  *smsv1.Tenant
	kc *adminv1.Client
}

// mirror brings one agent-made Plugin (nil: none yet) in line with the
// kernel's copy.
func (m *tenantSync) mirror(ctx context.Context, p *smsv1.Plugin, c kernelCopy) error {
	var e edits
	if p != nil {
		e = personEdits(p, specKey(p))
		if !p.DeletionTimestamp.IsZero() || upToDate(p, c, e) || personEditPending(p, c, e) {
			return nil
		}
	}
	t := m.t
	jp, by, err := m.fetch(ctx, p, c)
	if adminv1.IsNotFound(err) {
		return nil // uninstalled meanwhile; the next event says so
	}
	if err != nil {
		return err
	}
	obj, err := PluginObject(t, jp)
	if err != nil {
		return err
	}
	hash, _ := c.hashVersion()
	enabled, want := c.enabled(), c.enabled()
	if e.toggled && c.fiber == nil {
		want = specEnabled(p) // a person's toggle waits for a fiber to apply to
	}
	obj.Labels[smsv1.LabelOrigin] = string(smsv1.OriginAgent)
	obj.Annotations = map[string]string{smsv1.AnnotationRequestedBy: by,
		smsv1.AnnotationKernelSubmission: submissionID(jp), smsv1.AnnotationKernelCode: hash,
		smsv1.AnnotationKernelEnabled:   strconv.FormatBool(enabled),
		smsv1.AnnotationKernelInstalled: strconv.FormatBool(c.fiber != nil)}
	obj.Spec.Enabled = &want
	if p == nil {
		// The mirror is the operator, whose creates the webhook leaves
		// alone: the finalizer comes with the create, not a second write.
		obj.Finalizers = []string{smsv1.FinalizerUninstall}
	}
	if err := m.write(ctx, p, obj); err != nil {
		return fmt.Errorf("mirror agent plugin %s: %w", jp.Manifest.ID, err)
	}
	if p == nil {
		m.event(obj, false, "Mirrored", fmt.Sprintf("the agent defined %s in tenant %s", jp.Manifest.ID, t.Name))
	} else {
		m.event(obj, false, "Mirrored", fmt.Sprintf("the kernel's copy of %s changed: version %s (%s), enabled %t", jp.Manifest.ID, jp.Manifest.Version, shortHash(hash), enabled))
	}
	return nil
}

// write creates the Plugin when there is none (a create never takes over
// an object someone else made under that name), else replaces its whole
// spec with the kernel's copy, onto the version that was read: a field the
// kernel's copy no longer has goes, and a Plugin changed since is a
// conflict the next sync reads again. (A server-side apply would keep
// fields another field owner, even the create, still owns.)
func (m *tenantSync) write(ctx context.Context, p, obj *smsv1.Plugin) error {
	if p == nil {
		err := m.Client.Create(ctx, obj, client.FieldOwner(MirrorFieldOwner))
		if apierrors.IsAlreadyExists(err) {
			log.FromContext(ctx).Info("A Plugin with the mirrored plugin's name exists; not mirrored", "plugin", obj.Name)
			return nil
		}
		return err
	}
	next := p.DeepCopy()
	next.Spec = obj.Spec
	next.Labels = k8sMerge(next.Labels, obj.Labels)
	next.Annotations = k8sMerge(next.Annotations, obj.Annotations)
	return m.Client.Update(ctx, next, client.FieldOwner(MirrorFieldOwner))
}

// k8sMerge sets want's keys in have.
func k8sMerge(have, want map[string]string) map[string]string {
	if have == nil {
		have = map[string]string{}
	}
	maps.Copy(have, want)
	return have
}

// fetch returns the kernel's copy's manifest and code and who asked for
// it: a pending submission carries both; an installed one is exported.
func (m *tenantSync) fetch(ctx context.Context, p *smsv1.Plugin, c kernelCopy) (adminv1.Plugin, string, error) {
	by := "agent"
	if p != nil && p.Annotations[smsv1.AnnotationRequestedBy] != "" {
		by = p.Annotations[smsv1.AnnotationRequestedBy]
	}
	if c.pending != nil {
		if c.pending.RequestedBy != "" {
			by = c.pending.RequestedBy
		}
		return adminv1.Plugin{Manifest: c.pending.Manifest, Code: c.pending.Code}, by, nil
	}
	got, err := m.kc.Plugin(ctx, c.fiber.ID)
	if err != nil {
		return adminv1.Plugin{}, "", err
	}
	return adminv1.Plugin{Manifest: got.Manifest, Code: got.Code}, by, nil
}

// upToDate reports whether the Plugin already shows the kernel's copy:
// the annotations describe it and the spec is what they describe.
func upToDate(p *smsv1.Plugin, c kernelCopy, e edits) bool {
	hash, version := c.hashVersion()
	a := p.Annotations
	if e.edited || e.toggled {
		return false
	}
	return a[smsv1.AnnotationKernelCode] == hash && p.Spec.Version == version &&
		a[smsv1.AnnotationKernelEnabled] == strconv.FormatBool(c.enabled()) &&
		a[smsv1.AnnotationKernelInstalled] == strconv.FormatBool(c.fiber != nil) &&
		a[smsv1.AnnotationKernelSubmission] != ""
}

// personEditPending reports whether a person changed the Plugin's spec
// and the kernel has not seen the change yet: mirroring now would undo it.
func personEditPending(p *smsv1.Plugin, c kernelCopy, e edits) bool {
	if e.edited && !submitted(p, specKey(p)) {
		return true
	}
	return e.toggled && c.fiber != nil && c.fiber.Enabled != specEnabled(p)
}

// gone deletes an agent-made Plugin whose plugin the kernel uninstalled.
// One the kernel never installed (it waited for a human and was denied)
// stays, with its Approval, as the record of that decision.
//
// The uninstall finalizer goes first: the kernel has nothing to uninstall,
// and a finalizer left on would uninstall by id whatever the agent
// installed under that id between this read and the finalizer's turn.
// Both writes are onto the version read, so a Plugin changed since is left
// to the next sync.
func (m *Mirror) gone(ctx context.Context, p *smsv1.Plugin) error {
	if !p.DeletionTimestamp.IsZero() || p.Annotations[smsv1.AnnotationKernelInstalled] != "true" {
		return nil
	}
	if controllerutil.ContainsFinalizer(p, smsv1.FinalizerUninstall) {
		p = p.DeepCopy()
		controllerutil.RemoveFinalizer(p, smsv1.FinalizerUninstall)
		if err := m.Client.Update(ctx, p, client.FieldOwner(MirrorFieldOwner)); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("release uninstalled agent plugin %s: %w", p.Name, err)
		}
	}
	if err := m.Client.Delete(ctx, p, client.Preconditions{ResourceVersion: &p.ResourceVersion}); err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			return nil // changed since it was read; the next sync looks again
		}
		return fmt.Errorf("delete uninstalled agent plugin %s: %w", p.Name, err)
	}
	m.event(p, false, "Uninstalled", "the kernel uninstalled "+p.Spec.ID)
	return nil
}

// PluginObject returns a Plugin object (no status) for a kernel plugin of
// tenant t, named <tenant>-<id> with dots and underscores turned into
// dashes: the form `kubectl sms export` prints.
func PluginObject(t *smsv1.Tenant, jp adminv1.Plugin) (*smsv1.Plugin, error) {
	m := jp.Manifest
	code := jp.Code
	p := &smsv1.Plugin{
		TypeMeta: metav1.TypeMeta{APIVersion: smsv1.GroupVersion.String(), Kind: "Plugin"},
		ObjectMeta: metav1.ObjectMeta{Name: pluginName(t.Name, m.ID), Namespace: t.Namespace,
			Labels: map[string]string{smsv1.LabelTenant: t.Name}},
		Spec: smsv1.PluginSpec{TenantRef: corev1Ref(t.Name), ID: m.ID, Version: m.Version, Description: m.Description,
			Inject: m.Inject, Optional: m.Optional, Provide: m.Provide, Scopes: m.Scopes, Points: m.Points, Code: &code},
	}
	if len(m.Contributes) > 0 {
		p.Spec.Contributes = map[string][]apiextensionsv1.JSON{}
		for point, items := range m.Contributes {
			p.Spec.Contributes[point] = []apiextensionsv1.JSON{} // an empty list still declares the point
			for _, item := range items {
				raw, err := json.Marshal(item)
				if err != nil {
					return nil, fmt.Errorf("plugin %s: contributes[%s]: %w", m.ID, point, err)
				}
				p.Spec.Contributes[point] = append(p.Spec.Contributes[point], apiextensionsv1.JSON{Raw: raw})
			}
		}
	}
	return p, nil
}

func pluginName(tenant, id string) string {
	name := tenant + "-" + strings.NewReplacer(".", "-", "_", "-").Replace(id)
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.TrimRight(name, "-")
}
