package kernelruntime

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// The kubernetes runtime creates and updates the kernels' StatefulSets and
// Services; it sets the Tenant as their controlling owner with
// blockOwnerDeletion, which needs update on tenants/finalizers where the
// OwnerReferencesPermissionEnforcement admission plugin runs.
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=sms.dev,resources=tenants/finalizers,verbs=update

// ErrStorageChanged means a tenant's storage can no longer be expressed by
// its existing StatefulSet: a kernel created on postgres has no volume
// claim template, and the templates cannot change, so it cannot move to
// sqlite. Retrying does not help; the StatefulSet must be deleted (the
// data on postgres stays) for the runtime to create it anew.
var ErrStorageChanged = errors.New("the storage driver changed from postgres to sqlite, which the kernel's StatefulSet cannot follow")

// Kubernetes runs each tenant's kernel as Kubernetes objects in the
// tenant's namespace: a one-replica StatefulSet (the kernel is a single
// writer) and a ClusterIP Service, both named <tenant>-kernel and
// controlled by the Tenant, so the garbage collector deletes them with it.
//
// Ensure is idempotent and may be retried; a Kubernetes is safe for
// concurrent use, though two concurrent Ensures of one tenant may see a
// conflict, which a retry resolves.
type Kubernetes struct {
	client client.Client
	scheme *runtime.Scheme
	opts   KubernetesOptions
}

var _ Runtime = (*Kubernetes)(nil)

// KubernetesOptions configure the kubernetes runtime.
type KubernetesOptions struct {
	// Image is the default kernel image, normally the operator's own, so
	// operator and kernel versions move together. Tenant.spec.image
	// overrides it.
	Image string
	// Command is the kernel container's command when it runs Image (the
	// manager's image: /sms-kernel, its kernel binary). Empty, and always
	// for a Tenant's spec.image, the image's entrypoint runs.
	Command []string
	// OperatorNamespace is where the operator's pods run: the kernels'
	// NetworkPolicy admits pods labelled control-plane=controller-manager
	// from there, and only them, to the admin port. Empty admits them from
	// every namespace.
	OperatorNamespace string
}

// NewKubernetes returns a runtime that writes kernels' objects through c.
// scheme knows the Tenant type (for owner references).
func NewKubernetes(c client.Client, scheme *runtime.Scheme, opts KubernetesOptions) *Kubernetes {
	return &Kubernetes{client: c, scheme: scheme, opts: opts}
}

// Ensure creates or updates the tenant's Service and StatefulSet and
// reports the kernel's in-cluster endpoint and whether its pod is ready.
// A suspended tenant's StatefulSet is scaled to zero and its volume kept.
//
// Writes are made with controllerutil.CreateOrUpdate, whose mutate
// functions change only the fields the runtime owns on the object read
// from the API server, so that whatever the server defaulted (probe
// timeouts, imagePullPolicy, dnsPolicy, updateStrategy, clusterIPs, ...)
// stays as it is and a second Ensure with the same Spec writes nothing.
// Sub-structures the runtime builds whole (ports, volumes, probes) spell
// out the values the server would otherwise default for the same reason.
// Server-side apply would also ignore defaults, but it removes fields a
// manager stops applying, and the StatefulSet's selector, serviceName and
// volumeClaimTemplates must be set on create and never touched again.
func (k *Kubernetes) Ensure(ctx context.Context, spec Spec) (Status, error) {
	kernel, err := newK8sKernel(spec, k.opts)
	if err != nil {
		return Status{}, err
	}
	if err := k.ensureService(ctx, kernel); err != nil {
		return Status{}, err
	}
	if err := k.ensureNetworkPolicy(ctx, kernel); err != nil {
		return Status{}, err
	}
	sts, err := k.ensureStatefulSet(ctx, kernel)
	if err != nil {
		return Status{}, err
	}
	return kernel.status(sts), nil
}

// Remove does nothing: the Tenant owns the kernel's objects, so the
// garbage collector deletes them with it. The PersistentVolumeClaim of a
// sqlite kernel is kept (the StatefulSet's claim retention policy is
// Retain both when deleted and when scaled), so a tenant deleted by
// mistake can be recreated on its data; delete the claim data-<tenant>-kernel-0
// to drop the data for good.
func (k *Kubernetes) Remove(context.Context, types.NamespacedName) error {
	return nil
}

func (k *Kubernetes) ensureService(ctx context.Context, kernel *k8sKernel) error {
	svc := &corev1.Service{ObjectMeta: kernel.objectMeta()}
	_, err := controllerutil.CreateOrUpdate(ctx, k.client, svc, func() error {
		kernel.mutateService(svc)
		return controllerutil.SetControllerReference(kernel.tenant, svc, k.scheme)
	})
	if err != nil {
		return fmt.Errorf("ensure service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}

func (k *Kubernetes) ensureStatefulSet(ctx context.Context, kernel *k8sKernel) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{ObjectMeta: kernel.objectMeta()}
	_, err := controllerutil.CreateOrUpdate(ctx, k.client, sts, func() error {
		if err := kernel.mutateStatefulSet(sts); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(kernel.tenant, sts, k.scheme)
	})
	if err != nil {
		return nil, fmt.Errorf("ensure statefulset %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	return sts, nil
}

// objectMeta names the kernel's objects; labels are merged in by the
// mutate functions so that labels others add survive.
func (k *k8sKernel) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: k.name, Namespace: k.tenant.Namespace}
}

func (k *k8sKernel) mutateService(svc *corev1.Service) {
	svc.Labels = k8sMergeLabels(svc.Labels, k.labels())
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Selector = k.labels()
	svc.Spec.Ports = []corev1.ServicePort{{
		Name:       k8sPortName,
		Protocol:   corev1.ProtocolTCP,
		Port:       k8sPort,
		TargetPort: intstr.FromString(k8sPortName),
	}, {
		Name:       k8sAdminPortName,
		Protocol:   corev1.ProtocolTCP,
		Port:       k8sAdminPort,
		TargetPort: intstr.FromString(k8sAdminPortName),
	}}
}

// mutateStatefulSet sets the selector, serviceName and volumeClaimTemplates
// only when the StatefulSet is being created (they are immutable), and on
// every call the replicas, the claim retention policy and the pod
// template.
func (k *k8sKernel) mutateStatefulSet(sts *appsv1.StatefulSet) error {
	sts.Labels = k8sMergeLabels(sts.Labels, k.labels())
	if sts.ResourceVersion == "" {
		sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: k.labels()}
		sts.Spec.ServiceName = k.name
		sts.Spec.VolumeClaimTemplates = k.claimTemplates()
	} else if k.sqlite && !k8sHasClaimTemplate(sts, k8sDataVolume) {
		return fmt.Errorf("tenant %s/%s: %w", k.tenant.Namespace, k.tenant.Name, ErrStorageChanged)
	}
	sts.Spec.Replicas = ptr.To(k.replicas())
	sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	sts.Spec.Template.Labels = k8sMergeLabels(sts.Spec.Template.Labels, k.labels())
	sts.Spec.Template.Annotations = k8sMergeLabels(sts.Spec.Template.Annotations, map[string]string{ChecksumAnnotation: k.checksum})
	k.mutatePodSpec(&sts.Spec.Template.Spec)
	return nil
}

func (k *k8sKernel) replicas() int32 {
	if k.tenant.Spec.Suspend {
		return 0
	}
	return 1
}

// status reads the StatefulSet's status as written by its controller.
func (k *k8sKernel) status(sts *appsv1.StatefulSet) Status {
	st := Status{Endpoint: fmt.Sprintf("http://%s.%s.svc:%d", k.name, k.tenant.Namespace, k8sPort),
		AdminEndpoint: fmt.Sprintf("http://%s.%s.svc:%d", k.name, k.tenant.Namespace, k8sAdminPort)}
	switch {
	case k.tenant.Spec.Suspend:
		st.Message = "suspended"
	case sts.Status.ReadyReplicas >= 1:
		st.Running = true
	default:
		st.Message = fmt.Sprintf("waiting for the kernel pod to be ready (%d/1)", sts.Status.ReadyReplicas)
	}
	return st
}

func k8sHasClaimTemplate(sts *appsv1.StatefulSet, name string) bool {
	for _, pvc := range sts.Spec.VolumeClaimTemplates {
		if pvc.Name == name {
			return true
		}
	}
	return false
}

// k8sMergeLabels sets want's labels on have, keeping the others.
func k8sMergeLabels(have, want map[string]string) map[string]string {
	if have == nil {
		have = make(map[string]string, len(want))
	}
	for key, value := range want {
		have[key] = value
	}
	return have
}
