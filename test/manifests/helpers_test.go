package manifests_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// repoRoot is the repository, seen from this package's directory (where go
// test runs it).
var repoRoot = filepath.Join("..", "..")

// Names the default install must produce: kubebuilder's project name sms
// gives the namespace sms-system and the name prefix sms-.
const (
	namespace  = "sms-system"
	deployment = "sms-controller-manager"
	container  = "manager"
)

// kubectl returns the path of kubectl; without one the test fails, or
// skips when SMS_SKIP_ENVTEST=1 asks for skipping.
func kubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		if testenv.Skipping() {
			t.Skipf("kubectl not found (%s=1): %v", testenv.SkipVariable, err)
		}
		t.Fatalf("kubectl is required by the manifest tests (set %s=1 to skip them): %v", testenv.SkipVariable, err)
	}
	return path
}

// render builds the kustomization in dir, relative to the repository root,
// and returns its objects in order.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	return renderAt(t, filepath.Join(repoRoot, dir))
}

// renderAt builds the kustomization at path.
func renderAt(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), kubectl(t), "kustomize", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", path, err, stderr.Bytes())
	}
	objs, err := parse(out)
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", path, err)
	}
	if len(objs) == 0 {
		t.Fatalf("kubectl kustomize %s rendered no objects", path)
	}
	return objs
}

// parse splits a YAML stream into objects. Each document must be strict
// YAML (no duplicate keys) and name its apiVersion, kind and metadata.name.
func parse(stream []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			return nil, fmt.Errorf("document %d: %w\n%s", i, err, doc)
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion, kind or metadata.name:\n%s", i, doc)
		}
		objs = append(objs, u)
	}
}

// find returns the object of that kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// decode converts u into out, failing on any field out's type does not
// have: the strictness the API server's field validation applies.
func decode(u *unstructured.Unstructured, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true)
}

// objRef names an object by kind and name.
type objRef struct{ kind, name string }

// mustGet finds the object ref names and decodes it into out.
func mustGet(t *testing.T, objs []*unstructured.Unstructured, ref objRef, out any) {
	t.Helper()
	kind, name := ref.kind, ref.name
	u := find(objs, kind, name)
	if u == nil {
		t.Fatalf("no %s %q in the output; have:\n%s", kind, name, names(objs))
	}
	if err := decode(u, out); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}

// names lists the objects as kind/name lines, for failure messages.
func names(objs []*unstructured.Unstructured) string {
	var b bytes.Buffer
	for _, o := range objs {
		fmt.Fprintf(&b, "  %s/%s\n", o.GetKind(), o.GetName())
	}
	return b.String()
}

// copyTree copies the directory src into dst, for tests that edit a
// kustomization without touching the repository.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
