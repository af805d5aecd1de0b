package local

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
)

// get answers GET url with the bearer token: status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// A tenant whose spec.image the runtime knows runs that kernel binary as
// a child process, with the arguments a pod gets: here the example ERP's,
// whose own route answers. Suspending stops the process; an image the
// runtime has no binary for is an invalid spec. Seen failing with Ensure
// starting the in-process kernel whatever the image (GET /api/erp/summary
// 404).
func TestLocalRunsAnImagesBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "erp-kernel")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../../examples/erp/cmd/erp-kernel").CombinedOutput(); err != nil {
		t.Fatalf("build the example's kernel: %v\n%s", err, out)
	}
	l := New(Options{Dir: t.TempDir(), Images: map[string]string{"erp-kernel:dev": bin}})
	t.Cleanup(l.Close)
	ten := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", Namespace: "ns"},
		Spec: smsv1.TenantSpec{Image: "erp-kernel:dev", Users: &smsv1.TenantUsers{}}}
	spec := kernelruntime.Spec{Tenant: ten, AdminToken: "child-token", BootstrapAdmin: []byte("root\nroot-password-long-enough\n")}
	st, err := l.Ensure(context.Background(), spec)
	if err != nil || !st.Running {
		t.Fatalf("Ensure = %+v, %v", st, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := get(t, st.Endpoint+"/api/erp/summary", "child-token")
		if status == 200 && strings.Contains(body, `"invoices":0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /api/erp/summary = %d %s, want the ERP's answer", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ten.Spec.Suspend = true
	if _, err := l.Ensure(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, st.Endpoint+"/healthz", ""); status != 0 {
		t.Errorf("a suspended tenant's kernel still answers (%d)", status)
	}
	ten.Spec.Suspend, ten.Spec.Image = false, "unknown:1"
	if _, err := l.Ensure(context.Background(), spec); !errors.Is(err, kernelruntime.ErrInvalidSpec) || !strings.Contains(err.Error(), "--image unknown:1=PATH") {
		t.Errorf("Ensure with an unknown image = %v, want an invalid spec naming the flag", err)
	}
	if err := l.Remove(context.Background(), types.NamespacedName{Namespace: "ns", Name: "acme"}); err != nil {
		t.Fatal(err)
	}
}
