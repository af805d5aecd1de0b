package agentcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLineBytes bounds one line a CLI prints.
const maxLineBytes = 16 << 20

// stderrTail is how much of a CLI's stderr an error quotes.
const stderrTail = 2 << 10

// Command is one run of an agent CLI.
type Command struct {
	// Path is the executable; Args its arguments.
	Path string
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the environment; nil inherits the process's.
	Env []string
	// Stdin is what the CLI reads from its standard input.
	Stdin string
}

// Lookup finds the CLI named name (a path, or a command on PATH) and
// names what to run when it is missing.
func Lookup(name, install string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s was not found (%w); install it with `%s`", name, err, install)
	}
	return path, nil
}

// Run runs c, handing each line it prints on stdout to line, until it
// exits or ctx ends (then the CLI and its children are killed). A line
// error stops the CLI and is returned. The returned string is the tail
// of what the CLI printed on stderr.
func Run(ctx context.Context, c Command, line func([]byte) error) (string, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = strings.NewReader(c.Stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A helper the CLI left behind may hold stderr open: Wait gives up
	// on it shortly after the CLI exits.
	cmd.WaitDelay = time.Second
	stderr := &tail{max: stderrTail}
	cmd.Stderr = stderr
	out, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer func() { _ = out.Close() }()
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close() // the CLI holds the only writer now
	if err != nil {
		return "", fmt.Errorf("start %s: %w", c.Path, err)
	}
	stop := context.AfterFunc(ctx, func() { kill(cmd) })
	defer stop()
	// When the CLI exits, whatever it left behind goes too, so that its
	// stdout closes and the reading below ends.
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		kill(cmd)
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil // the CLI exited well; a helper held its stderr
		}
		exited <- err
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var lineErr error
	for sc.Scan() {
		if lineErr = line(sc.Bytes()); lineErr != nil {
			kill(cmd)
			break
		}
	}
	if lineErr == nil {
		lineErr = sc.Err()
	}
	if lineErr != nil {
		kill(cmd)
	}
	waitErr := <-exited
	switch {
	case ctx.Err() != nil:
		return stderr.String(), ctx.Err()
	case lineErr != nil:
		return stderr.String(), lineErr
	case waitErr != nil:
		return stderr.String(), fmt.Errorf("%s: %w", c.Path, waitErr)
	}
	return stderr.String(), nil
}

// kill ends the CLI's process group: the CLI may have started helpers.
func kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = cmd.Process.Kill()
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// baseEnv are the variables every CLI keeps: where it runs, its locale
// and its network's proxies and certificates.
var baseEnv = []string{"PATH=", "HOME=", "USER=", "LOGNAME=", "LANG=", "LC_", "TZ=", "TMPDIR=", "XDG_", "TERM=",
	"SSL_CERT_", "HTTP_PROXY=", "HTTPS_PROXY=", "NO_PROXY=", "http_proxy=", "https_proxy=", "no_proxy="}

// Environ returns the variables of env (this process's when nil) that a
// CLI needs: baseEnv and those starting with one of prefixes (its own
// and its provider's). Nothing else of the kernel's environment reaches
// a CLI its model drives.
func Environ(env []string, prefixes ...string) []string {
	if env == nil {
		env = os.Environ()
	}
	var out []string
	for _, kv := range env {
		for _, p := range append(baseEnv, prefixes...) {
			if strings.HasPrefix(kv, p) {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}
