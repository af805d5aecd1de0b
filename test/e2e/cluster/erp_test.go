package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// erpImage is the example ERP's kernel image the story builds and imports.
const erpImage = "localhost/sms/erp-kernel:e2e"

// The example ERP's story (examples/erp/story.sh) on the real cluster: a
// Tenant whose spec.image is the ERP's own kernel image runs as a pod of
// the operator's StatefulSet, with the same arguments, probes and user as
// the manager's image; users and groups through kubectl sms; a chat as a
// salesperson approved with kubectl; the tool answering with that user's
// invoices only; a new script and a deleted pod restarting the kernel; a
// disable that keeps the data. The same script runs on manager dev
// (test/e2e), where its failing-first check is recorded.
func TestERPStoryOnTheCluster(t *testing.T) {
	need(t)
	ns := namespace(t)
	archive := filepath.Join(t.TempDir(), "erp-kernel.tar")
	if out, err := sh("make", "erp-image", "ERP_IMG="+erpImage, "ERP_IMAGE_ARCHIVE="+archive); err != nil {
		t.Fatalf("make erp-image: %v\n%s", err, out)
	}
	if out, err := sh("hack/realk8s.sh", "import", archive); err != nil {
		t.Fatalf("import the image: %v\n%s", err, out)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-sms"), "./cmd/kubectl-sms")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kubectl-sms: %v\n%s", err, out)
	}
	out, err := sh("hack/realk8s.sh", "run", "env", "PATH="+bin+":"+os.Getenv("PATH"), "KUBECTL_SMS_DIR="+bin,
		"SMS_STORY_NAMESPACE="+ns, "SMS_STORY_IMAGE="+erpImage, "SMS_STORY_DIR="+t.TempDir(), "bash", "examples/erp/story.sh")
	if err != nil || !strings.Contains(out, "ERP story passed") {
		t.Fatalf("examples/erp/story.sh on the cluster: %v\n%s", err, out)
	}
	t.Log(out)
}
