package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/internal/testinfra/envtestbin"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestDevDemo runs hack/demo.sh, the story `make demo` tells, with the real
// kubectl against `manager dev`: a tenant, the three verdicts, an approval
// through kubectl sms, a chat whose plugin is mirrored and exported, a
// disable, a second manager dev refused by the lock, and a restart that
// restores it all. The script fails on the first unmet expectation; with
// the lock's flock removed it failed here at the second manager dev.
func TestDevDemo(t *testing.T) {
	kubectl := devTools(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-sms"), "../../cmd/kubectl-sms")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kubectl-sms: %v\n%s", err, out)
	}
	var out bytes.Buffer
	demo := exec.Command("bash", "../../hack/demo.sh")
	demo.Env = append(os.Environ(), "MANAGER="+manager, "KUBECTL_SMS_DIR="+bin, "KUBECTL="+kubectl,
		"SMS_DEMO_DIR="+t.TempDir())
	demo.Stdout, demo.Stderr = &out, &out
	if err := demo.Run(); err != nil {
		t.Fatalf("hack/demo.sh: %v\n%s", err, out.String())
	}
	for _, want := range []string{"another manager dev is running", "21 doubled is 42.", "id: agent.doubler", "demo passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	t.Log(out.String())
}

// TestDevRunsOutsideACheckout starts `manager dev` in an empty directory
// far from this repository: it unpacks the manifests and samples it
// carries, and a sample tenant applied from the unpacked copy becomes
// Ready. Seen failing when manager dev looked for the repository's root
// ("run manager dev inside the repository").
func TestDevRunsOutsideACheckout(t *testing.T) {
	kubectl := devTools(t)
	elsewhere := t.TempDir()
	state := filepath.Join(elsewhere, "state")
	var out syncBuffer
	dev := exec.Command(manager, "dev", "--dir", state, "--executor", "goja")
	dev.Dir = elsewhere
	dev.Stdout, dev.Stderr = &out, &out
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = dev.Process.Signal(os.Interrupt)
		_ = dev.Wait()
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "sms is running") {
		if time.Now().After(deadline) {
			t.Fatalf("manager dev did not come up:\n%s", out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	sample := filepath.Join(state, "files", "config", "samples", "sms_v1_tenant.yaml")
	if !strings.Contains(out.String(), sample) {
		t.Errorf("manager dev does not point at the unpacked sample %s:\n%s", sample, out.String())
	}
	kc := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", filepath.Join(state, "kubeconfig"), "-n", "default"}, args...)...)
		cmd.Dir = elsewhere
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s\nmanager dev:\n%s", args, err, got, out.String())
		}
		return string(got)
	}
	kc("apply", "-f", sample)
	kc("wait", "--for=condition=Ready", "tenant/demo", "--timeout=90s")
}

// devTools checks for what manager dev and its tests need, the envtest
// binaries and kubectl, and returns kubectl's path. Without the binaries
// the test fails, or skips under SMS_SKIP_ENVTEST=1.
func devTools(t *testing.T) string {
	t.Helper()
	if _, err := envtestbin.Assets(); err != nil {
		if testenv.Skipping() {
			t.Skipf("%s=1: %v", testenv.SkipVariable, err)
		}
		t.Fatalf("%v (set %s=1 to skip)", err, testenv.SkipVariable)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("the test needs the kubectl binary on PATH:", err)
	}
	return kubectl
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's
// reads at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
