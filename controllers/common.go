package controllers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// Deps are what every controller needs.
type Deps struct {
	Client client.Client
	// Reader reads from the API server, bypassing the cache; nil means
	// Client. Reconcilers use it where a stale read would repeat work.
	Reader   client.Reader
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// HTTP is shared by the kernel clients.
	HTTP *http.Client
	// Streams, when set, says which kernels' event streams are down, so
	// calls to those fail fast.
	Streams interface {
		Down(types.NamespacedName) error
	}
	// Poll is how often a tenant's kernel is checked when nothing else
	// triggers a reconcile. Default 5 minutes: event streams and watches
	// wake what changed, so this is only a resync.
	Poll time.Duration

	memo statusMemo
}

// reader is Reader, else Client.
func (d *Deps) reader() client.Reader {
	if d.Reader == nil {
		return d.Client
	}
	return d.Reader
}

func (d *Deps) poll() time.Duration {
	if d.Poll <= 0 {
		return DefaultPoll
	}
	return d.Poll
}

// DefaultPoll is the resync period of Deps.Poll.
const DefaultPoll = 5 * time.Minute

// AdminTokenSecretName names the Secret holding a tenant's admin token.
func AdminTokenSecretName(tenant string) string { return tenant + "-kernel-admin" }

// ChatTokenSecretName names the Secret holding a tenant's chat credential.
func ChatTokenSecretName(tenant string) string { return tenant + "-kernel-chat" }

// ChatCredential is the name the kernel knows the chat credential by, and
// the scopes it holds.
const (
	ChatCredential = "chat"
	chatScopes     = "read,chat"
)

// kernelFor returns a client for the tenant's kernel, or an error saying
// why the kernel cannot be reached yet.
func (d *Deps) kernelFor(ctx context.Context, t *smsv1.Tenant) (*adminv1.Client, error) {
	if !meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady) || t.Status.AdminEndpoint == "" {
		return nil, fmt.Errorf("tenant %s is not ready", t.Name)
	}
	if d.Streams != nil {
		if err := d.Streams.Down(client.ObjectKeyFromObject(t)); err != nil {
			return nil, fmt.Errorf("tenant %s's kernel does not answer: %w", t.Name, err)
		}
	}
	var s corev1.Secret
	key := types.NamespacedName{Namespace: t.Namespace, Name: AdminTokenSecretName(t.Name)}
	if err := d.Client.Get(ctx, key, &s); err != nil {
		return nil, fmt.Errorf("read the admin token of tenant %s: %w", t.Name, err)
	}
	return adminv1.New(t.Status.AdminEndpoint, string(s.Data[smsv1.SecretKeyToken]), d.HTTP), nil
}

// event records a Kubernetes Event about obj.
func (d *Deps) event(obj runtime.Object, warning bool, reason, note string) {
	if d.Recorder == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	d.Recorder.Eventf(obj, nil, typ, reason, "Reconcile", "%s", note)
}

// patchStatus writes obj's status, changed from before's, through the
// status subresource only.
func (d *Deps) patchStatus(ctx context.Context, before, obj client.Object, changed bool) error {
	if !changed {
		return nil
	}
	sum, ok := statusSum(obj)
	if ok && d.memo.written(obj.GetUID(), sum) {
		return nil // the cache has not seen this reconciler's last patch yet
	}
	d.memo.sending(obj.GetUID())
	if err := d.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		d.memo.forget(obj.GetUID())
		return fmt.Errorf("update status of %s: %w", obj.GetName(), err)
	}
	if ok {
		d.memo.wrote(obj.GetUID(), sum)
	}
	return nil
}

func corev1Ref(name string) corev1.LocalObjectReference {
	return corev1.LocalObjectReference{Name: name}
}
