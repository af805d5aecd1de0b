package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/kernelclient"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// Mirror makes every agent plugin a kernel runs, or holds for approval,
// visible as a Plugin object labelled sms.dev/origin=agent. It also
// watches each ready kernel's event log and wakes the tenant controller
// when something happened there.
type Mirror struct {
	*Deps
	// Every is how often kernels' event logs are polled. Default 1 s.
	Every time.Duration

	wake    chan event.TypedGenericEvent[*smsv1.Tenant]
	mu      sync.Mutex
	cursors map[types.NamespacedName]int64
}

// NewMirror returns a mirror; its Start polls the kernels.
func NewMirror(d *Deps) *Mirror {
	return &Mirror{Deps: d, wake: make(chan event.TypedGenericEvent[*smsv1.Tenant], 1024),
		cursors: map[types.NamespacedName]int64{}}
}

// Sync creates Plugin objects for the kernel's agent plugins that have
// none. A Plugin being deleted still counts, so an uninstall in progress
// is not mirrored back.
func (m *Mirror) Sync(ctx context.Context, t *smsv1.Tenant, kc *kernelclient.Client, s kernelclient.State) error {
	var list smsv1.PluginList
	if err := m.Client.List(ctx, &list, client.InNamespace(t.Namespace)); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, p := range list.Items {
		if p.Spec.TenantRef.Name == t.Name {
			have[p.Spec.ID] = true
		}
	}
	for _, f := range s.Fibers {
		if f.Trust != kernel.TrustAgent || have[f.ID] {
			continue
		}
		got, err := kc.Plugin(ctx, f.ID)
		if kernelclient.IsNotFound(err) {
			continue // uninstalled meanwhile
		}
		if err != nil {
			return err
		}
		have[f.ID] = true
		if err := m.create(ctx, t, mirrored{judge.Plugin{Manifest: got.Manifest, Code: got.Code}, got.Enabled, "agent"}); err != nil {
			return err
		}
	}
	for _, a := range s.Pending {
		if have[a.PluginID] {
			continue
		}
		have[a.PluginID] = true
		if err := m.create(ctx, t, mirrored{judge.Plugin{Manifest: a.Manifest, Code: a.Code}, true, a.RequestedBy}); err != nil {
			return err
		}
	}
	return nil
}

// mirrored is a kernel plugin to mirror: its code, whether it runs, and
// who asked for it.
type mirrored struct {
	plugin  judge.Plugin
	enabled bool
	by      string
}

// create writes the mirrored Plugin.
func (m *Mirror) create(ctx context.Context, t *smsv1.Tenant, mp mirrored) error {
	jp, enabled, by := mp.plugin, mp.enabled, mp.by
	p, err := PluginObject(t, jp)
	if err != nil {
		return err
	}
	p.Labels[smsv1.LabelOrigin] = string(smsv1.OriginAgent)
	p.Annotations = map[string]string{smsv1.AnnotationRequestedBy: by}
	p.Spec.Enabled = &enabled
	if err := m.Client.Create(ctx, p); err != nil {
		if apierrors.IsAlreadyExists(err) {
			log.FromContext(ctx).Info("A Plugin with the mirrored plugin's name exists; not mirrored", "plugin", p.Name, "id", jp.Manifest.ID)
			return nil
		}
		return fmt.Errorf("mirror agent plugin %s: %w", jp.Manifest.ID, err)
	}
	m.event(p, false, "Mirrored", fmt.Sprintf("the agent defined %s in tenant %s", jp.Manifest.ID, t.Name))
	return nil
}

// PluginObject returns a Plugin object (no status) for a kernel plugin of
// tenant t, named <tenant>-<id> with dots and underscores turned into
// dashes: the form `kubectl sms export` prints.
func PluginObject(t *smsv1.Tenant, jp judge.Plugin) (*smsv1.Plugin, error) {
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

// Start polls every ready kernel's event log and wakes the tenant's
// reconcile when new events arrived. It implements manager.Runnable.
func (m *Mirror) Start(ctx context.Context) error {
	every := m.Every
	if every <= 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			m.pollAll(ctx)
		}
	}
}

func (m *Mirror) pollAll(ctx context.Context) {
	var list smsv1.TenantList
	if err := m.Client.List(ctx, &list); err != nil {
		return
	}
	for i := range list.Items {
		t := &list.Items[i]
		kc, err := m.kernelFor(ctx, t)
		if err != nil {
			continue
		}
		key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
		m.mu.Lock()
		after := m.cursors[key]
		m.mu.Unlock()
		events, err := kc.Events(ctx, after, 1000)
		if err != nil || len(events) == 0 {
			continue
		}
		m.mu.Lock()
		m.cursors[key] = events[len(events)-1].Seq
		m.mu.Unlock()
		select {
		case m.wake <- event.TypedGenericEvent[*smsv1.Tenant]{Object: t}:
		default: // the tenant is queued already
		}
	}
}
