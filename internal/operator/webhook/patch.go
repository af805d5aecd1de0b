package webhook

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// value is an annotation's wanted value; nil means absent.
type value = *string

func present(s string) value { return &s }

// lookup returns the annotation key of annotations, nil when absent.
func lookup(annotations map[string]string, key string) value {
	if v, ok := annotations[key]; ok {
		return present(v)
	}
	return nil
}

// patchOp is one RFC 6902 JSON patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// annotationOps returns the operations that turn the annotations current
// into ones holding want's keys with want's values (absent for nil),
// leaving other keys alone. It patches the annotations only, never
// re-encodes the whole object, so fields this package's types do not know
// survive untouched.
func annotationOps(current map[string]string, want map[string]value) []patchOp {
	if len(current) == 0 {
		set := map[string]string{}
		for k, v := range want {
			if v != nil {
				set[k] = *v
			}
		}
		if len(set) == 0 {
			return nil
		}
		return []patchOp{{Op: "add", Path: "/metadata/annotations", Value: set}}
	}
	var ops []patchOp
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, had := want[k], lookup(current, k)
		path := "/metadata/annotations/" + escapePointer(k)
		switch {
		case v != nil && (had == nil || *had != *v):
			ops = append(ops, patchOp{Op: "add", Path: path, Value: *v})
		case v == nil && had != nil:
			ops = append(ops, patchOp{Op: "remove", Path: path})
		}
	}
	return ops
}

// patched admits the request with ops applied, or unchanged when there
// are none.
func patched(ops []patchOp) admission.Response {
	if len(ops) == 0 {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed:   true,
		Patch:     raw,
		PatchType: &pt,
	}}
}

// escapePointer escapes a JSON pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
