package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// image is the manager image the tests build, import and deploy.
const image = "localhost/sms/manager:e2e"

// setupErr is why the cluster could not be brought up; every test fails
// with it. skip is set by SMS_SKIP_REALK8S.
var (
	setupErr error
	skip     bool
	root     string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = filepath.Abs("../../.."); err != nil {
		panic(err)
	}
	if os.Getenv("SMS_SKIP_REALK8S") != "" {
		skip = true
		return m.Run()
	}
	start := time.Now()
	setupErr = up()
	fmt.Printf("the cluster and the operator came up in %s\n", time.Since(start).Round(time.Second))
	code := m.Run()
	if os.Getenv("SMS_REALK8S_KEEP") == "" {
		if out, err := sh("hack/realk8s.sh", "down"); err != nil {
			fmt.Printf("hack/realk8s.sh down: %v\n%s", err, out)
			return 1
		}
	}
	return code
}

// need fails the test when the cluster is not there (and says how to
// build it), or skips it when SMS_SKIP_REALK8S is set.
func need(t *testing.T) {
	t.Helper()
	if skip {
		t.Skip("SMS_SKIP_REALK8S is set")
	}
	if setupErr != nil {
		t.Fatalf("the real cluster is not up (hack/setup-realk8s.sh builds it, hack/realk8s.sh runs it; needs root): %v", setupErr)
	}
}

// up brings up the cluster, builds and imports the manager image, and
// deploys the operator the way the README says, without cert-manager.
func up() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root: network namespaces, containerd and the kubelet")
	}
	out, err := sh("hack/realk8s.sh", "up")
	if err != nil {
		return fmt.Errorf("hack/realk8s.sh up: %w\n%s", err, out)
	}
	// The cluster's facts (KUBECONFIG, SMS_REALK8S_NODE_IP, ...) for the
	// tests and the commands they run.
	for _, line := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			if k, v, ok := strings.Cut(kv, "="); ok {
				_ = os.Setenv(k, v)
			}
		}
	}
	archive := filepath.Join(os.TempDir(), "sms-e2e-manager.tar")
	defer func() { _ = os.Remove(archive) }()
	if out, err := sh("make", "image", "IMG="+image, "IMAGE_ARCHIVE="+archive); err != nil {
		return fmt.Errorf("make image: %w\n%s", err, out)
	}
	if out, err := sh("hack/realk8s.sh", "import", archive); err != nil {
		return fmt.Errorf("import the image: %w\n%s", err, out)
	}
	// The cluster's namespace has no way out: the tools make deploy needs
	// are installed from out here first.
	if out, err := sh("make", "controller-gen", "kustomize"); err != nil {
		return fmt.Errorf("install the deploy tools: %w\n%s", err, out)
	}
	// make deploy sets the image in config/manager, as kubebuilder's does;
	// the checkout gets its file back.
	kust := filepath.Join(root, "config", "manager", "kustomization.yaml")
	saved, err := os.ReadFile(kust)
	if err != nil {
		return err
	}
	out, err = sh("hack/realk8s.sh", "run", "make", "install", "deploy", "DEPLOY_CONFIG=config/selfsigned", "IMG="+image)
	if werr := os.WriteFile(kust, saved, 0o644); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("make install deploy: %w\n%s", err, out)
	}
	// A redeploy of the same tag keeps the old pods: restart them on the
	// image just imported.
	if out, err := kubectl("-n", "sms-system", "rollout", "restart", "deploy/sms-controller-manager"); err != nil {
		return fmt.Errorf("restart the operator: %w\n%s", err, out)
	}
	if out, err := kubectl("-n", "sms-system", "rollout", "status", "deploy/sms-controller-manager", "--timeout", "300s"); err != nil {
		return fmt.Errorf("the operator did not become ready: %w\n%s", err, out)
	}
	return nil
}

// sh runs a command in the repository's root and returns its output.
func sh(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubectl runs the real kubectl inside the cluster's network namespace as
// the cluster's admin.
func kubectl(args ...string) (string, error) {
	return sh("hack/realk8s.sh", append([]string{"run", "kubectl"}, args...)...)
}

// k runs kubectl in namespace ns, failing the test on an error.
func k(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := kubectl(append([]string{"-n", ns}, args...)...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// namespace creates a namespace for one test, deleted when it ends.
func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%d", time.Now().UnixNano()%1_000_000_000)
	k(t, "default", "create", "namespace", ns)
	t.Cleanup(func() {
		if os.Getenv("SMS_REALK8S_KEEP") == "" {
			_, _ = kubectl("delete", "namespace", ns, "--wait=false")
		}
	})
	return ns
}

// eventually retries check every second until it returns nil, failing
// after limit with its last error.
func eventually(t *testing.T, what string, limit time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, limit, err)
		}
		time.Sleep(time.Second)
	}
}
