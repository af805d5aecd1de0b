package devenv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked means another process holds the directory's lock.
var ErrLocked = errors.New("another manager dev is running on this directory")

// lock holds an exclusive flock on a file for the life of the process;
// the kernel releases it when the process dies, so a crash never leaves
// a stale lock behind.
type lock struct{ f *os.File }

// acquire takes the lock at path without waiting and records this
// process's id in it. When another process holds it, the error names
// that process.
func acquire(path string) (*lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		raw, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (pid %s holds %s): stop it first, or pass another --dir", ErrLocked, pidOf(raw), path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write the lock file: %w", err)
	}
	return &lock{f: f}, nil
}

func pidOf(raw []byte) string {
	if pid := strings.TrimSpace(string(raw)); pid != "" {
		return pid
	}
	return "unknown"
}

// release drops the lock.
func (l *lock) release() error { return l.f.Close() }
