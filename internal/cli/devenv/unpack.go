package devenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sms-baseline/sms"
)

// Unpack writes the files the binary carries (sms.Files: CRDs, webhook
// configuration, samples, the demo model's script, hack/setup-envtest.sh)
// under dir, replacing older copies, and returns dir: a root laid out like
// the repository, so manager dev runs anywhere, not only in a checkout.
func Unpack(dir string) (string, error) {
	err := fs.WalkDir(sms.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := sms.Files.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, raw, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("unpack the manifests into %s: %w", dir, err)
	}
	return dir, nil
}
