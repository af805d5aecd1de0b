package envtestbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Versions of the binaries hack/setup-envtest.sh builds; keep in step.
const (
	kubernetesVersion = "v1.37.2"
	etcdVersion       = "v3.6.16"
)

// ErrNoAssets means the kube-apiserver and etcd binaries were not found.
var ErrNoAssets = errors.New("envtest binaries not found: run eval \"$(hack/setup-envtest.sh)\" (make test does)")

// Assets finds the envtest binaries: KUBEBUILDER_ASSETS, else the cache
// directory hack/setup-envtest.sh fills.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if hasAssets(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s holds no kube-apiserver and etcd: %w", dir, ErrNoAssets)
	}
	root := os.Getenv("SMS_ENVTEST_DIR")
	if root == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", ErrNoAssets
			}
			cache = filepath.Join(home, ".cache")
		}
		root = filepath.Join(cache, "sms-envtest")
	}
	dir := filepath.Join(root, "k8s-"+kubernetesVersion+"-etcd-"+etcdVersion)
	if !hasAssets(dir) {
		return "", ErrNoAssets
	}
	return dir, nil
}

func hasAssets(dir string) bool {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// RepoRoot walks up from the working directory to the directory holding
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
