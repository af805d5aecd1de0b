package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of these objects.
	GroupVersion = schema.GroupVersion{Group: "sms.dev", Version: "v1"}

	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers Tenant, Plugin and Approval and their lists.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Tenant{}, &TenantList{},
		&Plugin{}, &PluginList{},
		&Approval{}, &ApprovalList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
