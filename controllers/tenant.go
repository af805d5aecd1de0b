package controllers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// TenantReconciler runs each Tenant's kernel and reports its health.
type TenantReconciler struct {
	*Deps
	Runtime kernelruntime.Runtime
	// Mirror mirrors agent-made plugins as Plugin objects; nil disables it.
	Mirror *Mirror
	// Watchers follow the kernels' event streams; nil disables them.
	Watchers *Watchers
}

// +kubebuilder:rbac:groups=sms.dev,resources=tenants,verbs=get;list;watch
// +kubebuilder:rbac:groups=sms.dev,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile implements reconcile.Reconciler.
func (r *TenantReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var t smsv1.Tenant
	if err := r.Client.Get(ctx, req.NamespacedName, &t); err != nil {
		if apierrors.IsNotFound(err) {
			r.unwatch(req.NamespacedName)
			return ctrl.Result{}, r.Runtime.Remove(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !t.DeletionTimestamp.IsZero() {
		r.unwatch(req.NamespacedName)
		return ctrl.Result{}, r.Runtime.Remove(ctx, req.NamespacedName)
	}
	before := t.DeepCopy()
	wasReady := meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady)
	res, err := r.reconcile(ctx, &t)
	t.Status.ObservedGeneration = t.Generation
	if perr := r.patchStatus(ctx, before, &t, semanticChanged(before.Status, t.Status)); perr != nil {
		return ctrl.Result{}, perr
	}
	if ready := meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady); ready != wasReady {
		c := meta.FindStatusCondition(t.Status.Conditions, smsv1.ConditionReady)
		r.event(&t, !ready, c.Reason, c.Message)
	}
	return res, err
}

// reconcile brings the kernel up and fills t.Status; a returned error is
// also reported in the conditions.
func (r *TenantReconciler) reconcile(ctx context.Context, t *smsv1.Tenant) (ctrl.Result, error) {
	spec, err := r.resolve(ctx, t)
	var missing *missingRef
	switch {
	case errors.As(err, &missing):
		// GitOps may apply the Secret after the Tenant: a watch on it
		// wakes this reconcile.
		r.reconciling(t, smsv1.ReasonReferenceNotFound, err.Error())
		r.unwatch(client.ObjectKeyFromObject(t))
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	case err != nil:
		r.stalled(t, smsv1.ReasonInvalidSpec, err.Error())
		r.unwatch(client.ObjectKeyFromObject(t))
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	st, err := r.Runtime.Ensure(ctx, spec)
	if err != nil {
		r.reconciling(t, smsv1.ReasonKernelStarting, err.Error())
		return ctrl.Result{}, err
	}
	t.Status.Endpoint, t.Status.AdminEndpoint = st.Endpoint, st.AdminEndpoint
	t.Status.AdminTokenSecret, t.Status.ChatTokenSecret = spec.AdminTokenSecret, spec.ChatTokenSecret
	if t.Spec.Suspend || !st.Running {
		r.unwatch(client.ObjectKeyFromObject(t))
	}
	if t.Spec.Suspend {
		setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReady, false, smsv1.ReasonSuspended, "the tenant is suspended; its data is kept")
		setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReconciling, false, smsv1.ReasonSuspended, "")
		setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionStalled, false, smsv1.ReasonSuspended, "")
		return ctrl.Result{}, nil
	}
	if !st.Running {
		r.reconciling(t, smsv1.ReasonKernelStarting, st.Message)
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	kc := adminv1.New(st.AdminEndpoint, spec.AdminToken, r.HTTP)
	probe, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	state, err := kc.State(probe)
	if err != nil {
		r.reconciling(t, smsv1.ReasonKernelUnreachable, err.Error())
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	if r.Watchers != nil {
		r.Watchers.Ensure(t, st.AdminEndpoint, spec.AdminToken)
	}
	countPlugins(t, state)
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReady, true, smsv1.ReasonKernelReady, fmt.Sprintf("kernel %s serves at %s", state.Kernel, st.Endpoint))
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReconciling, false, smsv1.ReasonKernelReady, "")
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionStalled, false, smsv1.ReasonKernelReady, "")
	if r.Mirror != nil {
		if err := r.Mirror.Sync(ctx, t, kc, state); err != nil {
			log.FromContext(ctx).Error(err, "Mirror agent plugins")
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
	}
	return ctrl.Result{RequeueAfter: r.poll()}, nil
}

// healthTimeout bounds the tenant's health check, so a hung kernel holds
// a worker for seconds, not for the HTTP client's timeout.
const healthTimeout = 5 * time.Second

// unwatch stops following the tenant's kernel.
func (r *TenantReconciler) unwatch(key types.NamespacedName) {
	if r.Watchers != nil {
		r.Watchers.Stop(key)
	}
}

func (r *TenantReconciler) reconciling(t *smsv1.Tenant, reason, msg string) {
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReady, false, reason, msg)
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReconciling, true, reason, msg)
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionStalled, false, reason, "")
}

func (r *TenantReconciler) stalled(t *smsv1.Tenant, reason, msg string) {
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReady, false, reason, msg)
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionReconciling, false, reason, "")
	setCond(&t.Status.Conditions, t.Generation).to(smsv1.ConditionStalled, true, reason, msg)
}

// countPlugins fills the plugin counts and taint from the kernel's state.
func countPlugins(t *smsv1.Tenant, s adminv1.State) {
	var c smsv1.PluginCounts
	for _, f := range s.Fibers {
		if f.Trust != adminv1.TrustAgent {
			continue
		}
		switch f.State {
		case adminv1.StateActive:
			c.Mounted++
		case adminv1.StateFailed:
			c.Failed++
		}
	}
	c.Pending = int32(len(s.Pending))
	t.Status.Plugins = &c
	t.Status.Taint = s.Taint
}

// resolve reads the secrets the tenant refers to, creating its admin
// token on first use.
func (r *TenantReconciler) resolve(ctx context.Context, t *smsv1.Tenant) (kernelruntime.Spec, error) {
	admin, err := r.tokenSecret(ctx, t, AdminTokenSecretName(t.Name), nil)
	if err != nil {
		return kernelruntime.Spec{}, err
	}
	chat, err := r.tokenSecret(ctx, t, ChatTokenSecretName(t.Name), chatTokenAuth)
	if err != nil {
		return kernelruntime.Spec{}, err
	}
	spec := kernelruntime.Spec{Tenant: t, AdminToken: string(admin[adminTokenKey]), AdminTokenSecret: AdminTokenSecretName(t.Name),
		ChatTokenSecret: ChatTokenSecretName(t.Name), ChatTokenAuth: chat[tokenAuthKey]}
	if m := t.Spec.Model; m != nil {
		if m.KeySecretRef != nil {
			if spec.ModelKey, err = r.secretKey(ctx, t.Namespace, *m.KeySecretRef); err != nil {
				return spec, fmt.Errorf("spec.model.keySecretRef: %w", err)
			}
		}
		if m.ScriptConfigMapRef != nil {
			script, err := r.configMapKey(ctx, t.Namespace, *m.ScriptConfigMapRef)
			if err != nil {
				return spec, fmt.Errorf("spec.model.scriptConfigMapRef: %w", err)
			}
			spec.ModelScript = []byte(script)
		} else if m.Provider == "scripted" {
			return spec, fmt.Errorf("spec.model: the scripted provider needs scriptConfigMapRef")
		}
	}
	if p := t.Spec.Storage.Postgres; t.Spec.Storage.Driver == smsv1.StoragePostgres && p != nil {
		if spec.PostgresURL, err = r.secretKey(ctx, t.Namespace, p.URLSecretRef); err != nil {
			return spec, fmt.Errorf("spec.storage.postgres.urlSecretRef: %w", err)
		}
	}
	return spec, nil
}

// tokenSecret returns the data of a token Secret of the tenant, creating
// it (owned by the tenant) with a random token the first time. more, when
// set, derives further keys from the token.
func (r *TenantReconciler) tokenSecret(ctx context.Context, t *smsv1.Tenant, name string,
	more func(token string) map[string][]byte) (map[string][]byte, error) {
	var s corev1.Secret
	key := types.NamespacedName{Namespace: t.Namespace, Name: name}
	err := r.Client.Get(ctx, key, &s)
	if err == nil {
		if len(s.Data[adminTokenKey]) == 0 {
			return nil, fmt.Errorf("secret %s has no %q key", key.Name, adminTokenKey)
		}
		return s.Data, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(raw)
	s = corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{smsv1.LabelTenant: t.Name}},
		Data:       map[string][]byte{adminTokenKey: []byte(token)},
	}
	if more != nil {
		maps.Copy(s.Data, more(token))
	}
	if err := controllerutil.SetControllerReference(t, &s, r.Scheme); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, &s); err != nil {
		return nil, fmt.Errorf("create secret %s: %w", key.Name, err)
	}
	return s.Data, nil
}

// chatTokenAuth is the kernel's --token-auth-file for the chat credential.
func chatTokenAuth(token string) map[string][]byte {
	return map[string][]byte{tokenAuthKey: fmt.Appendf(nil, "%s,%s,%q\n", token, ChatCredential, chatScopes)}
}

// missingRef is a referenced Secret or ConfigMap, or a key of one, that
// does not exist (yet): the tenant waits for it rather than stalls.
type missingRef struct{ msg string }

func (e *missingRef) Error() string { return e.msg }

// lookup reads a referenced object from the API server (the cache holds
// only labelled ones); NotFound becomes a *missingRef.
func (r *TenantReconciler) lookup(ctx context.Context, key types.NamespacedName, kind string, obj client.Object) error {
	if err := r.reader().Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return &missingRef{fmt.Sprintf("%s %s does not exist", kind, key.Name)}
		}
		return fmt.Errorf("%s %s: %w", kind, key.Name, err)
	}
	return nil
}

func (r *TenantReconciler) secretKey(ctx context.Context, ns string, ref corev1.SecretKeySelector) (string, error) {
	var s corev1.Secret
	if err := r.lookup(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, "secret", &s); err != nil {
		return "", err
	}
	v, ok := s.Data[ref.Key]
	if !ok {
		return "", &missingRef{fmt.Sprintf("secret %s has no key %q", ref.Name, ref.Key)}
	}
	return string(v), nil
}

func (r *TenantReconciler) configMapKey(ctx context.Context, ns string, ref corev1.ConfigMapKeySelector) (string, error) {
	var cm corev1.ConfigMap
	if err := r.lookup(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, "configmap", &cm); err != nil {
		return "", err
	}
	v, ok := cm.Data[ref.Key]
	if !ok {
		return "", &missingRef{fmt.Sprintf("configmap %s has no key %q", ref.Name, ref.Key)}
	}
	return v, nil
}

// tenantOf maps an object with a tenant reference to its Tenant's request.
func tenantRequest(ns, name string) []ctrl.Request {
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
