package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const token = "erp-binary-token"

// free returns a loopback address nothing listens on.
func free(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// call sends one JSON request with the admin token and decodes the answer.
func call(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	out, _ := io.ReadAll(res.Body)
	var v map[string]any
	_ = json.Unmarshal(out, &v)
	return res.StatusCode, v
}

// The binary built from this main is a whole kernel: it serves the ERP's
// seeded models and summary route, and runs an agent plugin in the
// isolated executor's child, which is this same binary's sandbox
// subcommand. Seen failing with the sandbox subcommand left out of the
// App's command tree (the agent plugin's mount failed: unknown command
// "sandbox").
func TestBinaryServesTheERP(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "erp-kernel")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	addr := free(t)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "kernel", "--listen="+addr, "--store=sqlite:"+filepath.Join(dir, "erp.db"),
		"--admin-token-file="+write("token", token), "--bootstrap-admin-file="+write("admin", "root\nroot-password-long-enough\n"),
		"--executor=isolated", "--auto-approve")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kernel log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel is not ready after 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, out := call(t, "POST", base+"/api/orm/contact/search", map[string]any{}); status != 200 || fmt.Sprint(out["ids"]) != "[1 2]" {
		t.Errorf("contacts = %d %v, want the two seeded", status, out)
	}
	if status, out := call(t, "GET", base+"/api/erp/summary", nil); status != 200 || out["invoices"] != 0.0 {
		t.Errorf("summary = %d %v, want no invoices", status, out)
	}
	code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hello', handler: async () => ({ body: { hello: 'from the sandbox' } }) })
}`
	status, out := call(t, "POST", base+"/api/plugins", map[string]any{"manifest": map[string]any{"id": "agent.hello", "version": "1",
		"points": []string{"route"}}, "code": code})
	if status != 200 || out["status"] != "mounted" {
		t.Fatalf("submit an agent plugin = %d %v, want it mounted", status, out)
	}
	if status, out := call(t, "GET", base+"/hello", nil); status != 200 || !strings.Contains(fmt.Sprint(out), "from the sandbox") {
		t.Errorf("GET /hello = %d %v, want the agent plugin's answer", status, out)
	}
}
