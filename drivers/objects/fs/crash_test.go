package fs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/objects/fs"
)

// crashEnv, when set, makes the test binary a child that puts an object
// whose body never ends, under the root it names, until it is killed.
const crashEnv = "SMS_FS_CRASH_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(crashEnv); root != "" {
		st, err := fs.New(root)
		if err != nil {
			os.Exit(2)
		}
		body := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("new"), 1<<20)), blocking{})
		_, _ = st.Put(context.Background(), "report.bin", body, contracts.PutOptions{Size: 8 << 20})
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// blocking never answers a read.
type blocking struct{}

func (blocking) Read([]byte) (int, error) { select {} }

// TestCrashLeavesNoTornObject: a process killed in the middle of a put
// leaves the previous object whole, and the next New removes its
// temporary file. Seen failing with Put writing the object's own file in
// place (the killed put left a file with no trailer where the object was).
func TestCrashLeavesNoTornObject(t *testing.T) {
	root := t.TempDir()
	st, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("old"), 1000)
	if _, err := st.Put(context.Background(), "report.bin", bytes.NewReader(old), contracts.PutOptions{Size: int64(len(old))}); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), crashEnv+"="+root)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has written most of the body, wherever it writes.
	deadline := time.Now().Add(30 * time.Second)
	for written(root) < 3<<20 {
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatal("the child never wrote its body")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = child.Process.Kill()
	_ = child.Wait()

	st, err = fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	info, rc, err := st.Get(context.Background(), "report.bin", contracts.GetOptions{})
	if err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if !bytes.Equal(got, old) || info.Size != int64(len(old)) {
		t.Fatalf("after the crash the object has %d bytes, want the previous %d", len(got), len(old))
	}
	if tmps, _ := filepath.Glob(filepath.Join(root, "tmp", "*")); len(tmps) != 0 {
		t.Fatalf("New left the crash's temporary files: %v", tmps)
	}
	if _, err := st.Head(context.Background(), "nothing"); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Fatal(err)
	}
}

// written is the bytes of every file under root.
func written(root string) int64 {
	var n int64
	_ = filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
