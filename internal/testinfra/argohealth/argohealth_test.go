package argohealth_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/internal/testinfra/argohealth"
)

// Every recorded fixture gets its recorded answer. The fixtures are
// objects the real controllers produced (see the operator's
// TestArgoCDHealth, which records them), so this is the check Argo CD's
// own resource_customizations tests run, on real objects. Seen failing
// with Plugin's health.lua answering Healthy for a Stalled plugin.
func TestFixtures(t *testing.T) {
	for _, kind := range argohealth.Kinds {
		cs, err := argohealth.LoadCases(argohealth.Group, kind)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, c := range cs.Tests {
			obj, err := argohealth.LoadInput(argohealth.Group, kind, c.InputPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := argohealth.Check(obj)
			if err != nil {
				t.Fatalf("%s %s: %v", kind, c.InputPath, err)
			}
			if got != c.HealthStatus {
				t.Errorf("%s %s: health %+v, want %+v", kind, c.InputPath, got, c.HealthStatus)
			}
			seen[got.Status] = true
		}
		if !seen["Healthy"] || !seen["Progressing"] || !seen["Degraded"] {
			t.Errorf("%s's fixtures cover %v; want at least Healthy, Progressing and Degraded", kind, seen)
		}
	}
}

// The argocd-cm patch users apply holds exactly the checks in
// resource_customizations. SMS_UPDATE_ARGOCD=1 rewrites it.
func TestArgoCDConfigMap(t *testing.T) {
	if os.Getenv("SMS_UPDATE_ARGOCD") != "" {
		if err := argohealth.WriteConfigMap(); err != nil {
			t.Fatal(err)
		}
	}
	want, err := argohealth.ConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(argohealth.ConfigMapPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what resource_customizations renders; run SMS_UPDATE_ARGOCD=1 go test ./internal/testinfra/argohealth", argohealth.ConfigMapPath())
	}
}

// The harness is as strict as Argo CD: no string library, and an answer
// that is not a known health code is an error.
func TestRunIsStrict(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"generation": int64(1)}}
	if _, err := argohealth.Run(`return { status = string.upper("healthy") }`, obj); err == nil {
		t.Error("a check that uses the string library ran; Argo CD does not open it")
	}
	if _, err := argohealth.Run(`return { status = "Fine" }`, obj); err == nil || !strings.Contains(err.Error(), `"Fine"`) {
		t.Errorf("status Fine: %v, want an error naming it", err)
	}
	if st, err := argohealth.Run(`if obj.metadata.generation == 1 then return { status = "Healthy" } end`, obj); err != nil || st.Status != "Healthy" {
		t.Errorf("generation 1: %+v, %v; want Healthy (int64 reaches Lua as a number)", st, err)
	}
}
