package kernelruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// OperatorPodLabels select the operator's pods (config/manager labels them
// so); the kernels' NetworkPolicy admits only them to the admin port.
var OperatorPodLabels = map[string]string{"control-plane": "controller-manager"}

// ensureNetworkPolicy writes the kernel's NetworkPolicy: the application
// port is open to every client, the admin port only to the operator's
// pods. Tenants live in any namespace, so the runtime writes one per
// kernel, controlled by the Tenant like its other objects.
func (k *Kubernetes) ensureNetworkPolicy(ctx context.Context, kernel *k8sKernel) error {
	np := &networkingv1.NetworkPolicy{ObjectMeta: kernel.objectMeta()}
	_, err := controllerutil.CreateOrUpdate(ctx, k.client, np, func() error {
		kernel.mutateNetworkPolicy(np)
		return controllerutil.SetControllerReference(kernel.tenant, np, k.scheme)
	})
	if err != nil {
		return fmt.Errorf("ensure networkpolicy %s/%s: %w", np.Namespace, np.Name, err)
	}
	return nil
}

func (k *k8sKernel) mutateNetworkPolicy(np *networkingv1.NetworkPolicy) {
	np.Labels = k8sMergeLabels(np.Labels, k.labels())
	tcp := ptr.To(corev1.ProtocolTCP)
	operator := networkingv1.NetworkPolicyPeer{
		PodSelector:       &metav1.LabelSelector{MatchLabels: OperatorPodLabels},
		NamespaceSelector: &metav1.LabelSelector{},
	}
	if k.operatorNS != "" {
		operator.NamespaceSelector.MatchLabels = map[string]string{corev1.LabelMetadataName: k.operatorNS}
	}
	np.Spec = networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: k.labels()},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(k8sPort))}}},
			{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(k8sAdminPort))}},
				From:  []networkingv1.NetworkPolicyPeer{operator},
			},
		},
	}
}
