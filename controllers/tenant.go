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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// TenantReconciler runs each Tenant's kernel and reports its health.
type TenantReconciler struct {
	*Deps
	Runtime kernelruntime.Runtime
	// Watchers follow the kernels' event streams; nil disables them.
	Watchers *Watchers
}

// +kubebuilder:rbac:groups=sms.dev,resources=tenants,verbs=get;list;watch
// +kubebuilder:rbac:groups=sms.dev,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile implements reconcile.Reconciler: the phases (reconcile) fill
// an observation, and one deferred status patch writes what tenantStatus
// makes of it and of their error.
func (r *TenantReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	var t smsv1.Tenant
	if err := r.Client.Get(ctx, req.NamespacedName, &t); err != nil {
		if apierrors.IsNotFound(err) {
			r.unwatch(req.NamespacedName)
			return ctrl.Result{}, r.Runtime.Remove(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !t.DeletionTimestamp.IsZero() {
		r.memo.gone(t.UID)
		r.unwatch(req.NamespacedName)
		return ctrl.Result{}, r.Runtime.Remove(ctx, req.NamespacedName)
	}
	before := t.DeepCopy()
	o := &tenantObservation{}
	var err error
	defer func() {
		t.Status = tenantStatus(before, o, err)
		changed, wait := r.statusChange(before, &t)
		if perr := r.patchStatus(ctx, before, &t, changed); perr != nil {
			res, retErr = ctrl.Result{}, perr
			return
		}
		if wait > 0 && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
			res.RequeueAfter = wait
		}
		r.announce(before, &t)
	}()
	res, err = r.reconcile(ctx, &t, o)
	return outcome(res, err, r.poll())
}

// statusChange reports whether t's status is to be written: it changed,
// and not only in plugin counts that were written within countsInterval,
// which wait (the reconcile comes back after wait to write them).
func (r *TenantReconciler) statusChange(before, t *smsv1.Tenant) (changed bool, wait time.Duration) {
	if equality.Semantic.DeepEqual(before.Status, t.Status) {
		return false, 0
	}
	now := time.Now()
	if onlyCounts(&before.Status, &t.Status) {
		if wait = r.memo.countsWait(t.UID, now); wait > 0 {
			return false, wait
		}
	}
	if !equality.Semantic.DeepEqual(before.Status.Plugins, t.Status.Plugins) || !equality.Semantic.DeepEqual(before.Status.Budget, t.Status.Budget) {
		r.memo.countsWritten(t.UID, now)
	}
	return true, 0
}

// announce records an Event when Ready changed.
func (r *TenantReconciler) announce(before, t *smsv1.Tenant) {
	wasReady := meta.IsStatusConditionTrue(before.Status.Conditions, smsv1.ConditionReady)
	if ready := meta.IsStatusConditionTrue(t.Status.Conditions, smsv1.ConditionReady); ready != wasReady {
		c := meta.FindStatusCondition(t.Status.Conditions, smsv1.ConditionReady)
		r.event(t, !ready, c.Reason, c.Message)
	}
}

// reconcile runs the phases of one Tenant's reconcile, recording what
// they find in o: the Secrets and ConfigMaps its spec names (resolve),
// the kernel the runtime runs (Ensure), the kernel's health and its
// event stream.
func (r *TenantReconciler) reconcile(ctx context.Context, t *smsv1.Tenant, o *tenantObservation) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(t)
	spec, err := r.resolve(ctx, t)
	var missing *missingRef
	switch {
	case errors.As(err, &missing):
		// GitOps may apply the Secret after the Tenant: a watch on it
		// wakes this reconcile.
		r.unwatch(key)
		return ctrl.Result{}, waitFor(smsv1.ReasonReferenceNotFound, err.Error())
	case err != nil:
		r.unwatch(key)
		return ctrl.Result{}, invalidSpec(err)
	}
	st, err := r.Runtime.Ensure(ctx, spec)
	if errors.Is(err, kernelruntime.ErrInvalidSpec) {
		return ctrl.Result{}, invalidSpec(err)
	}
	if err != nil {
		return ctrl.Result{}, &retryError{reason: smsv1.ReasonKernelStarting, err: err}
	}
	o.runtime, o.adminSecret, o.chatSecret = &st, spec.AdminTokenSecret, spec.ChatTokenSecret
	if t.Spec.Suspend || !st.Running {
		r.unwatch(key)
	}
	if t.Spec.Suspend {
		o.suspended = true
		return ctrl.Result{}, nil
	}
	if !st.Running {
		return ctrl.Result{}, &waitError{reason: smsv1.ReasonKernelStarting, msg: st.Message, after: 2 * time.Second}
	}
	kc := adminv1.New(st.AdminEndpoint, spec.AdminToken, r.HTTP)
	probe, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	state, err := kc.State(probe)
	if errors.Is(err, adminv1.ErrVersion) {
		// Only a new image mends it; the poll notices a kernel replaced
		// under the same image name.
		r.unwatch(key)
		return ctrl.Result{RequeueAfter: r.poll()}, stalledBy(smsv1.ReasonIncompatibleKernel,
			fmt.Sprintf("the kernel of image %s: %v", imageOf(t), err))
	}
	if err != nil {
		return ctrl.Result{}, &waitError{reason: smsv1.ReasonKernelUnreachable, msg: err.Error(), after: 2 * time.Second}
	}
	if r.Watchers != nil {
		r.Watchers.Ensure(t, st.AdminEndpoint, spec.AdminToken)
	}
	o.state = &state
	if t.Spec.Budget != nil { // a second request per resync for budgeted tenants only
		if b, err := kc.Budget(probe); err == nil {
			o.budget = &b
		}
	}
	return ctrl.Result{RequeueAfter: r.poll()}, nil
}

// imageOf names the tenant's kernel image for messages.
func imageOf(t *smsv1.Tenant) string {
	if t.Spec.Image == "" {
		return "(the operator's own)"
	}
	return t.Spec.Image
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
	spec := kernelruntime.Spec{Tenant: t, AdminToken: string(admin[smsv1.SecretKeyToken]), AdminTokenSecret: AdminTokenSecretName(t.Name),
		ChatTokenSecret: ChatTokenSecretName(t.Name), ChatTokenAuth: chat[smsv1.SecretKeyTokenAuth]}
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
		} else if m.Provider == smsv1.ModelScripted {
			return spec, fmt.Errorf("spec.model: the scripted provider needs scriptConfigMapRef")
		}
	}
	if u := t.Spec.Users; u != nil && u.BootstrapAdminSecretRef != nil {
		if spec.BootstrapAdmin, err = r.bootstrapAdmin(ctx, t.Namespace, u.BootstrapAdminSecretRef.Name); err != nil {
			return spec, fmt.Errorf("spec.users.bootstrapAdminSecretRef: %w", err)
		}
	}
	if o := t.Spec.Objects; o != nil && o.Driver == smsv1.ObjectsS3 && o.S3 != nil {
		var keys []string
		for _, k := range []string{smsv1.SecretKeyAccessKey, smsv1.SecretKeySecretKey} {
			v, err := r.secretKey(ctx, t.Namespace, corev1.SecretKeySelector{LocalObjectReference: o.S3.CredentialsSecretRef, Key: k})
			if err != nil {
				return spec, fmt.Errorf("spec.objects.s3.credentialsSecretRef: %w", err)
			}
			keys = append(keys, v)
		}
		spec.ObjectsCredentials = []byte(keys[0] + "\n" + keys[1] + "\n")
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
		if len(s.Data[smsv1.SecretKeyToken]) == 0 {
			return nil, fmt.Errorf("secret %s has no %q key", key.Name, smsv1.SecretKeyToken)
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
		Data:       map[string][]byte{smsv1.SecretKeyToken: []byte(token)},
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
	return map[string][]byte{smsv1.SecretKeyTokenAuth: fmt.Appendf(nil, "%s,%s,%q\n", token, ChatCredential, chatScopes)}
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

// bootstrapAdmin reads the first admin from the Secret name, as the
// kernel's --bootstrap-admin-file reads it: the login, then the password.
func (r *TenantReconciler) bootstrapAdmin(ctx context.Context, ns, name string) ([]byte, error) {
	var vals [2]string
	for i, key := range []string{smsv1.SecretKeyLogin, smsv1.SecretKeyPassword} {
		v, err := r.secretKey(ctx, ns, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key})
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return []byte(vals[0] + "\n" + vals[1] + "\n"), nil
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

// tenantRequest is the request of Tenant name in namespace ns.
func tenantRequest(ns, name string) []ctrl.Request {
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
