package local

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/kernelcmd"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
)

// A tenant whose spec names no model gets the runtime's default model
// (manager dev's scripted demo); one that names a model keeps its own.
// Seen failing with the DefaultModel case removed (no model at all).
func TestLocalDefaultModel(t *testing.T) {
	demo := kernelcmd.Model{Provider: "scripted", Script: "/demo.json"}
	l := New(Options{Dir: t.TempDir(), DefaultModel: demo})
	bare := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: bare})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != demo {
		t.Errorf("model of a tenant without one = %+v, want %+v", cfg.Model, demo)
	}
	own := bare.DeepCopy()
	own.Spec.Model = &smsv1.TenantModel{Provider: "openaicompat", Name: "llama", BaseURL: "http://127.0.0.1:1/v1"}
	cfg, err = l.config(t.TempDir(), kernelruntime.Spec{Tenant: own})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Provider != "openaicompat" || cfg.Model.Name != "llama" || cfg.Model.Script != "" {
		t.Errorf("model of a tenant naming one = %+v, want its own", cfg.Model)
	}
}
