package manifests_test

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

const approver = "sms-approval-approver"

// The approver ClusterRole grants exactly what deciding an Approval needs:
// the custom verb approve, which the Approval webhook checks, plus reading
// and patching approvals, in sms.dev and nothing else. Seen failing with
// "create" added to its verbs, and with "approve" removed.
func TestApproverRoleIsLeast(t *testing.T) {
	var role rbacv1.ClusterRole
	mustGet(t, render(t, "config/default"), objRef{"ClusterRole", approver}, &role)
	want := rbacv1.PolicyRule{
		APIGroups: []string{"sms.dev"},
		Resources: []string{"approvals"},
		Verbs:     []string{"approve", "get", "list", "patch", "update", "watch"},
	}
	if len(role.Rules) != 1 {
		t.Fatalf("%s has %d rules, want 1: %+v", approver, len(role.Rules), role.Rules)
	}
	got := role.Rules[0]
	verbs := slices.Sorted(slices.Values(got.Verbs))
	if !slices.Equal(got.APIGroups, want.APIGroups) || !slices.Equal(got.Resources, want.Resources) ||
		!slices.Equal(verbs, want.Verbs) || len(got.ResourceNames) != 0 || len(got.NonResourceURLs) != 0 {
		t.Errorf("%s rule = %+v, want %+v", approver, got, want)
	}
}

// Only the approver role and the approval admin role (full control of
// approvals, kubebuilder's '*') may approve; in particular the manager's
// own role and the editor role may not, so the operator never decides for
// a human. Seen failing with "approve" added to approval_editor_role.yaml.
func TestOnlyApproverRolesApprove(t *testing.T) {
	allowed := []string{approver, "sms-approval-admin-role"}
	for _, o := range render(t, "config/default") {
		if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole // a Role's rules decode the same way
		if err := decode(o, &role); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if grantsApprove(role.Rules) && !slices.Contains(allowed, o.GetName()) {
			t.Errorf("%s %s may approve approvals.sms.dev; only %q may", o.GetKind(), o.GetName(), allowed)
		}
	}
}

func grantsApprove(rules []rbacv1.PolicyRule) bool {
	for _, r := range rules {
		group := slices.Contains(r.APIGroups, "sms.dev") || slices.Contains(r.APIGroups, "*")
		resource := slices.Contains(r.Resources, "approvals") || slices.Contains(r.Resources, "*")
		verb := slices.Contains(r.Verbs, "approve") || slices.Contains(r.Verbs, "*")
		if group && resource && verb {
			return true
		}
	}
	return false
}

// Every binding refers to a role and service accounts the install creates,
// under their prefixed names, and kubebuilder's editor, viewer and admin
// roles exist for each kind. Seen failing with the roleRef of
// role_binding.yaml misspelt (manager-rol).
func TestBindingsResolve(t *testing.T) {
	objs := render(t, "config/default")
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // a ClusterRoleBinding decodes the same way
		if err := decode(o, &b); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if find(objs, b.RoleRef.Kind, b.RoleRef.Name) == nil {
			t.Errorf("%s %s refers to %s %q, which the install does not create", o.GetKind(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			if sa := find(objs, "ServiceAccount", s.Name); sa == nil || sa.GetNamespace() != s.Namespace {
				t.Errorf("%s %s binds service account %s/%s, which the install does not create", o.GetKind(), o.GetName(), s.Namespace, s.Name)
			}
		}
	}
	rbac := render(t, "config/rbac")
	for _, kind := range []string{"tenant", "plugin", "approval"} {
		for _, role := range []string{"admin", "editor", "viewer"} {
			if find(rbac, "ClusterRole", kind+"-"+role+"-role") == nil {
				t.Errorf("config/rbac has no ClusterRole %s-%s-role", kind, role)
			}
		}
	}
	if find(rbac, "ClusterRole", "approval-approver") == nil {
		t.Errorf("config/rbac has no ClusterRole approval-approver")
	}
}
