package argohealth

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Case is one entry of a health_test.yaml, Argo CD's fixture format: the
// object at InputPath (relative to the kind's directory) must get
// HealthStatus.
type Case struct {
	HealthStatus Status `json:"healthStatus"`
	InputPath    string `json:"inputPath"`
}

// Cases is a health_test.yaml.
type Cases struct {
	Tests []Case `json:"tests"`
}

func casesPath(group, kind string) string {
	return filepath.Join(Root(), group, kind, "health_test.yaml")
}

// LoadCases reads the fixtures of group and kind.
func LoadCases(group, kind string) (Cases, error) {
	var cs Cases
	b, err := os.ReadFile(casesPath(group, kind))
	if err != nil {
		return cs, err
	}
	if err := yaml.UnmarshalStrict(b, &cs); err != nil {
		return cs, fmt.Errorf("%s: %w", casesPath(group, kind), err)
	}
	return cs, nil
}

// LoadInput reads a fixture's object.
func LoadInput(group, kind, inputPath string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(filepath.Join(Root(), group, kind, inputPath))
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inputPath, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		return nil, fmt.Errorf("%s: %w", inputPath, err)
	}
	return u, nil
}

// Record writes obj as the fixture testdata/<name>.yaml of its kind,
// without the fields the API server fills for its own bookkeeping, and
// sets its expected answer in health_test.yaml.
func Record(name string, obj *unstructured.Unstructured, st Status) error {
	obj = obj.DeepCopy()
	for _, f := range [][]string{{"managedFields"}, {"uid"}, {"resourceVersion"}, {"creationTimestamp"}, {"ownerReferences"}} {
		unstructured.RemoveNestedField(obj.Object, append([]string{"metadata"}, f...)...)
	}
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return err
	}
	gvk := obj.GroupVersionKind()
	input := "testdata/" + name + ".yaml"
	if err := os.WriteFile(filepath.Join(Root(), gvk.Group, gvk.Kind, input), b, 0o644); err != nil {
		return err
	}
	cs, err := LoadCases(gvk.Group, gvk.Kind)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	cs.Tests = slices.DeleteFunc(cs.Tests, func(c Case) bool { return c.InputPath == input })
	cs.Tests = append(cs.Tests, Case{HealthStatus: st, InputPath: input})
	slices.SortFunc(cs.Tests, func(a, b Case) int { return cmp.Compare(a.InputPath, b.InputPath) })
	out, err := yaml.Marshal(cs)
	if err != nil {
		return err
	}
	return os.WriteFile(casesPath(gvk.Group, gvk.Kind), out, 0o644)
}
