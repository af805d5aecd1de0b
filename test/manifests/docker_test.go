package manifests_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The image build sees every file the Go code embeds: .dockerignore
// excludes everything but Go sources and re-includes embedded files by
// name, so each //go:embed pattern of non-test code needs its line. No
// container engine runs here, so this is the check the docker build would
// otherwise fail. Seen failing with the ledger/migrations line removed.
func TestDockerignoreKeepsEmbeddedFiles(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Split(string(raw), "\n")
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, pattern := range embeds(t, path) {
			rel, err := filepath.Rel(repoRoot, filepath.Join(filepath.Dir(path), pattern))
			if err != nil {
				return err
			}
			if want := "!" + filepath.ToSlash(rel); !slices.Contains(kept, want) {
				t.Errorf("%s embeds %s: .dockerignore needs the line %s", path, pattern, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// embeds returns the patterns of the //go:embed lines of a Go file.
func embeds(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var patterns []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "//go:embed "); ok {
			patterns = append(patterns, strings.Fields(rest)...)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return patterns
}
