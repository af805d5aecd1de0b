package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestERPStoryOnDev runs examples/erp/story.sh with the real kubectl
// against `manager dev`, which runs the example ERP's own kernel binary
// for the Tenant's spec.image: users and groups through kubectl sms, a
// chat as a salesperson whose plugin a person approves with kubectl, the
// tool answering with that user's invoices only, two restarts, and a
// disable that keeps the data. The script stops at the first unmet
// expectation; with the local runtime ignoring spec.image (the manager's
// own kernel ran) it stopped when Sam was added to sales: "no group
// sales".
func TestERPStoryOnDev(t *testing.T) {
	kubectl := devTools(t)
	bin := t.TempDir()
	for name, pkg := range map[string]string{"kubectl-sms": "../../cmd/kubectl-sms", "erp-kernel": "../../examples/erp/cmd/erp-kernel"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	var out bytes.Buffer
	story := exec.Command("bash", "../../examples/erp/story.sh")
	story.Env = append(os.Environ(), "MANAGER="+manager, "ERP_KERNEL="+filepath.Join(bin, "erp-kernel"),
		"KUBECTL_SMS_DIR="+bin, "KUBECTL="+kubectl, "SMS_STORY_DIR="+t.TempDir())
	story.Stdout, story.Stderr = &out, &out
	if err := story.Run(); err != nil {
		t.Fatalf("examples/erp/story.sh: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "ERP story passed") {
		t.Errorf("the story did not finish:\n%s", out.String())
	}
	t.Log(out.String())
}
