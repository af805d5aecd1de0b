package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/internal/envtestbin"
	"github.com/sms-baseline/sms/internal/testenv"
)

// TestDevDemo runs hack/demo.sh, the story `make demo` tells, with the real
// kubectl against `manager dev`: a tenant, the three verdicts, an approval
// through kubectl sms, a chat whose plugin is mirrored and exported, a
// disable, a second manager dev refused by the lock, and a restart that
// restores it all. The script fails on the first unmet expectation; with
// the lock's flock removed it failed here at the second manager dev.
func TestDevDemo(t *testing.T) {
	if _, err := envtestbin.Assets(); err != nil {
		if testenv.Skipping() {
			t.Skipf("%s=1: %v", testenv.SkipVariable, err)
		}
		t.Fatalf("%v (set %s=1 to skip)", err, testenv.SkipVariable)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("the demo needs the kubectl binary on PATH:", err)
	}
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
