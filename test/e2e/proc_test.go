package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// manager and kernelBin are the paths of `manager` and `sms-kernel`, which
// TestMain builds beside `sms-sandbox`, so that kernels start it for
// their agent plugins as they do in the image.
var manager, kernelBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sms-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	manager, kernelBin = filepath.Join(dir, "manager"), filepath.Join(dir, "sms-kernel")
	build := exec.Command("go", "build", "-o", dir+"/", "../../cmd/manager", "../../cmd/sms-kernel", "../../cmd/sms-sandbox")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the binaries:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// kernelProc is one running `manager kernel`.
type kernelProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	url  string
	log  *bytes.Buffer
	args []string
	env  []string
	addr string // the --listen address, kept across restarts
}

// start runs `manager kernel` with args on a free loopback port and waits
// until /healthz answers.
func start(t testing.TB, args ...string) *kernelProc { return startEnv(t, nil, args...) }

// startEnv is start with more environment variables for the process.
func startEnv(t testing.TB, env []string, args ...string) *kernelProc {
	t.Helper()
	return startAt(t, env, freeAddrs(t, 1)[0], args...)
}

// startAt is startEnv listening on addr.
func startAt(t testing.TB, env []string, addr string, args ...string) *kernelProc {
	t.Helper()
	p := &kernelProc{t: t, url: "http://" + addr, addr: addr, log: &bytes.Buffer{}, args: args, env: env}
	return p.launch(manager)
}

// launch runs `PROGRAM kernel` with p's listener, arguments and
// environment, and waits until /healthz answers.
func (p *kernelProc) launch(program string) *kernelProc {
	t := p.t
	t.Helper()
	p.cmd = exec.Command(program, append([]string{"kernel", "--listen", p.addr}, p.args...)...)
	p.cmd.Env = append(os.Environ(), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	for range 200 {
		if resp, err := http.Get(p.url + "/healthz"); err == nil {
			_ = resp.Body.Close()
			return p
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("manager kernel did not become healthy:\n%s", p.log)
	return nil
}

// freeAddrs returns n distinct loopback addresses with ports nobody
// listens on now (all are held open until all are chosen).
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ln.Close() }()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// at returns a view of p that sends its requests to base (another
// listener of the same process).
func (p *kernelProc) at(base string) *kernelProc {
	v := *p
	v.url = base
	return &v
}

// wait waits for the process to exit on its own and returns how it ended.
func (p *kernelProc) wait() error { return p.cmd.Wait() }

// stop sends SIGTERM and expects a clean exit.
func (p *kernelProc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("manager kernel exited with %v:\n%s", err, p.log)
	}
}

// restart stops the process and starts a new one with the same arguments.
func (p *kernelProc) restart() *kernelProc {
	p.t.Helper()
	p.stop()
	return startAt(p.t, p.env, p.addr, p.args...)
}

// reply is an HTTP answer.
type reply struct {
	status int
	text   string
	json   map[string]any
}

func (r reply) str(key string) string { s, _ := r.json[key].(string); return s }

func (r reply) kind() string {
	e, _ := r.json["error"].(map[string]any)
	k, _ := e["kind"].(string)
	return k
}

// call is one request: a body that is a string is sent as is, anything
// else as JSON.
type call struct {
	method, path, token string
	body                any
}

func (p *kernelProc) do(c call) reply {
	p.t.Helper()
	var rd io.Reader
	switch b := c.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(c.method, p.url+c.path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", c.method, c.path, err, p.log)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, text: strings.TrimSpace(string(raw))}
	_ = json.Unmarshal(raw, &r.json)
	return r
}
