package devenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLockRefusesASecondHolder: a second acquire of the same file fails
// with ErrLocked naming the holder's pid, and succeeds once the first is
// released. flock locks belong to open file descriptions, so two opens in
// one process contend like two processes do. With the Flock call removed
// the second acquire succeeded and this test failed.
func TestLockRefusesASecondHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.lock")
	first, err := acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = acquire(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second acquire: %v, want ErrLocked", err)
	}
	if pid := strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), "pid "+pid) {
		t.Errorf("the error does not name the holder (pid %s): %v", pid, err)
	}
	if err := first.release(); err != nil {
		t.Fatal(err)
	}
	again, err := acquire(path)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := again.release(); err != nil {
		t.Fatal(err)
	}
}
