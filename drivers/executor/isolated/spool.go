package isolated

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// spool is the child's output. A write never blocks the child's one
// goroutine, which must go on reading its input: what the pipe cannot take
// at once is finished by a goroutine of its own, and later writes queue
// behind it. A parent that stops reading while it writes to the child
// therefore never deadlocks with it; what waits meanwhile is bounded by the
// child's memory limit.
type spool struct {
	f  *os.File        // the nonblocking descriptor, for the flusher
	rc syscall.RawConn // the same, for attempts that must not wait

	mu      sync.Mutex
	pending []byte // written, not yet taken by the pipe; owned by the flusher while busy
	busy    bool
	err     error
}

// newSpool returns out as a spool when it is a file whose descriptor can be
// made nonblocking, and out itself otherwise.
func newSpool(out io.Writer) io.Writer {
	f, ok := out.(*os.File)
	if !ok {
		return out
	}
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return out
	}
	nf := os.NewFile(uintptr(fd), f.Name()) // pollable now that it is nonblocking
	rc, err := nf.SyscallConn()
	if err != nil {
		return out
	}
	return &spool{f: nf, rc: rc}
}

// Write implements io.Writer: it takes all of p and does not wait.
func (s *spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.busy {
		s.pending = append(s.pending, p...)
		return len(p), nil
	}
	n, err := s.attempt(p)
	if err != nil {
		s.err = err
		return n, err
	}
	if n < len(p) {
		s.pending = append(s.pending[:0], p[n:]...)
		s.busy = true
		go s.flush()
	}
	return len(p), nil
}

// attempt writes what the pipe takes now.
func (s *spool) attempt(p []byte) (int, error) {
	written := 0
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for written < len(p) {
			n, err := syscall.Write(int(fd), p[written:])
			if n > 0 {
				written += n
			}
			switch {
			case errors.Is(err, syscall.EINTR):
			case errors.Is(err, syscall.EAGAIN):
				return true // the rest goes to the flusher; never wait here
			case err != nil:
				werr = err
				return true
			case n <= 0:
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return written, err
}

// flush writes what is pending, waiting for the pipe, until nothing is.
func (s *spool) flush() {
	for {
		s.mu.Lock()
		buf := s.pending
		s.pending = nil
		if len(buf) == 0 {
			s.busy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if _, err := s.f.Write(buf); err != nil {
			s.mu.Lock()
			s.err, s.busy = err, false
			s.mu.Unlock()
			return
		}
	}
}
