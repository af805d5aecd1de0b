// Package manifests checks what `kubectl apply -k` would send to a cluster:
// it renders config/default, config/crd, config/rbac and config/samples with
// the kustomize built into kubectl and asserts the install's invariants
// (names and namespace after kustomize's prefix, the manager's arguments and
// hardening, the webhook wiring to cert-manager, least-privilege approver
// RBAC) and that every sample decodes strictly into the api/v1 types, so a
// misspelt field fails here rather than being dropped by the API server.
//
// Without kubectl the tests fail, or skip when SMS_SKIP_ENVTEST=1.
// The package has no non-test code.
package manifests
