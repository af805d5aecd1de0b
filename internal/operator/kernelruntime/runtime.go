package kernelruntime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// Spec is what a runtime needs to run one tenant's kernel: the Tenant and
// the secrets its spec refers to, already read by the caller.
type Spec struct {
	// Tenant is the tenant; runtimes read its spec and own their objects
	// through it.
	Tenant *smsv1.Tenant
	// AdminTokenSecret names the Secret (key smsv1.SecretKeyToken) holding
	// AdminToken.
	AdminTokenSecret string
	// AdminToken is the operator's credential: every scope, approve
	// included, which nobody else holds.
	AdminToken string
	// ChatTokenSecret names the Secret (keys smsv1.SecretKeyToken and
	// smsv1.SecretKeyTokenAuth) of the credential people use through
	// kubectl sms: read and chat, never approve or admin.
	ChatTokenSecret string
	// ChatTokenAuth is that Secret's smsv1.SecretKeyTokenAuth, the kernel's
	// --token-auth-file.
	ChatTokenAuth []byte
	// ModelKey is the model's API key, read from spec.model.keySecretRef.
	ModelKey string
	// ModelScript is the scripted model's JSON, read from
	// spec.model.scriptConfigMapRef.
	ModelScript []byte
	// PostgresURL is read from spec.storage.postgres.urlSecretRef.
	PostgresURL string
	// ObjectsCredentials is the S3 access key and secret key, a line each,
	// read from spec.objects.s3.credentialsSecretRef.
	ObjectsCredentials []byte
	// BootstrapAdmin is the first admin as the kernel's
	// --bootstrap-admin-file reads it (the login, then the password, a
	// line each), read from spec.users.bootstrapAdminSecretRef.
	BootstrapAdmin []byte
}

// ChecksumAnnotation is the annotation on a kernel's pod template holding
// Spec.Checksum: when a referenced Secret or ConfigMap changes, the
// template changes and the pod is replaced, so the kernel reads the new
// values (environment variables never change in a running container).
const ChecksumAnnotation = "sms.dev/config-checksum"

// Checksum digests the values read from Secrets and ConfigMaps: the
// tokens, the model key and script, and the Postgres URL. Equal specs
// give equal checksums; a rotated value gives another.
func (s Spec) Checksum() string {
	raw, _ := json.Marshal(struct {
		Token, Key, URL                  string
		Script, Chat, Bootstrap, Objects []byte
	}{s.AdminToken, s.ModelKey, s.PostgresURL, s.ModelScript, s.ChatTokenAuth, s.BootstrapAdmin, s.ObjectsCredentials})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// ErrInvalidSpec means a runtime cannot run the tenant as its spec says:
// only a new spec changes the answer, so the tenant is Stalled.
var ErrInvalidSpec = errors.New("the runtime cannot run this spec")

// Status is where a tenant's kernel is and whether it runs.
type Status struct {
	// Endpoint is the base URL of the kernel's application routes, such
	// as http://127.0.0.1:41234.
	Endpoint string
	// AdminEndpoint is the base URL of its admin API: a port of its own in
	// the kubernetes runtime, which only the operator may reach; the same
	// as Endpoint in the local runtime.
	AdminEndpoint string
	// Running is true when the kernel's process or pod is up; the caller
	// still asks the kernel itself whether it is ready.
	Running bool
	// Message says what the runtime is waiting for when not Running.
	Message string
}

// Runtime runs tenants' kernels somewhere: as StatefulSets (Kubernetes)
// or inside the manager's process (Local).
type Runtime interface {
	// Ensure makes the tenant's kernel run as spec says, or stops it
	// (keeping its data) when the tenant is suspended, and reports where
	// it is. It is idempotent: a second call with the same spec changes
	// nothing.
	Ensure(ctx context.Context, spec Spec) (Status, error)
	// Remove stops a deleted tenant's kernel. Kubernetes objects go with
	// their owner; the local runtime stops the kernel and keeps its data.
	Remove(ctx context.Context, tenant types.NamespacedName) error
}

// PostgresSchema is the tenant's Postgres schema: spec.storage.postgres.schema,
// else tenant_<name> with dashes turned into underscores.
func PostgresSchema(t *smsv1.Tenant) string {
	if p := t.Spec.Storage.Postgres; p != nil && p.Schema != "" {
		return p.Schema
	}
	return "tenant_" + strings.ReplaceAll(t.Name, "-", "_")
}

// ObjectsSpec is a tenant's --objects for its S3 bucket, its prefix
// defaulting to "<namespace>/<name>/"; "" when it has no S3 store.
func ObjectsSpec(t *smsv1.Tenant) string {
	o := t.Spec.Objects
	if o == nil || o.Driver != smsv1.ObjectsS3 || o.S3 == nil {
		return ""
	}
	q := url.Values{}
	if o.S3.Endpoint != "" {
		q.Set("endpoint", o.S3.Endpoint)
	}
	if o.S3.Region != "" {
		q.Set("region", o.S3.Region)
	}
	prefix := o.S3.Prefix
	if prefix == "" {
		prefix = t.Namespace + "/" + t.Name + "/"
	}
	q.Set("prefix", prefix)
	return "s3://" + o.S3.Bucket + "?" + q.Encode()
}

// SystemPluginNames is a Tenant's spec.systemPlugins as the kernel's
// --system-plugins names (nil for none).
func SystemPluginNames(list []smsv1.SystemPlugin) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = string(p)
	}
	return out
}

// Approvers returns how many approvers tenant t's kernel needs (0: the
// default, one) and the groups they must come from.
func Approvers(t *smsv1.Tenant) (int, []string) {
	n := 0
	if t.Spec.Judge.Approvers != nil {
		n = int(*t.Spec.Judge.Approvers)
	}
	return n, t.Spec.Judge.ApproverGroups
}

// Budget is the kernel's --budget flag for t's spec.budget: its JSON as
// it is (the two share one shape), or empty for none.
func Budget(t *smsv1.Tenant) string {
	if t.Spec.Budget == nil {
		return ""
	}
	raw, err := json.Marshal(t.Spec.Budget)
	if err != nil { // a struct of strings and integers always encodes
		panic(fmt.Sprintf("kernelruntime: encode spec.budget: %v", err))
	}
	return string(raw)
}
