package isolated

import (
	"bytes"
	"strings"
	"sync"
)

// stderrTail keeps what a child wrote to stderr: the first line that says
// why it is dying, and the last few kilobytes for the log.
type stderrTail struct {
	mu    sync.Mutex
	first string
	buf   []byte
}

const tailSize = 4 << 10

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if t.first == "" {
		lines := bytes.Split(t.buf, []byte("\n"))
		for _, line := range lines[:len(lines)-1] { // complete lines only
			s := string(line)
			if strings.HasPrefix(s, "fatal error:") || strings.HasPrefix(s, "panic:") || strings.HasPrefix(s, "sandbox:") ||
				strings.HasPrefix(s, "runtime: out of memory") || strings.Contains(s, "ThreadSanitizer failed to allocate") {
				t.first = s
				break
			}
		}
	}
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(p), nil
}

// String returns the kept tail.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastWords returns the line that explains the exit, or the last line.
func (t *stderrTail) lastWords() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first != "" {
		return t.first
	}
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return lines[len(lines)-1]
}
