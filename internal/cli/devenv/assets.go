package devenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sms-baseline/sms/internal/testinfra/envtestbin"
)

// assets finds the kube-apiserver and etcd binaries, building them with
// hack/setup-envtest.sh first when they are missing. The script's
// progress goes to progress: the first build takes many minutes.
func assets(root string, progress io.Writer) (string, error) {
	dir, err := envtestbin.Assets()
	if err == nil || !errors.Is(err, envtestbin.ErrNoAssets) || os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return dir, err
	}
	script := filepath.Join(root, "hack", "setup-envtest.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("the kube-apiserver and etcd binaries are missing and %s, which builds them, is not there: run manager dev from the repository", script)
	}
	_, _ = fmt.Fprintln(progress, "Building kube-apiserver and etcd from the Go module proxy (once per machine; many minutes on 2 cores)...")
	cmd := exec.Command("bash", script)
	cmd.Dir = root
	cmd.Stdout = io.Discard // the export line; envtestbin.Assets finds the same cache
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the control plane with %s: %w", script, err)
	}
	return envtestbin.Assets()
}
