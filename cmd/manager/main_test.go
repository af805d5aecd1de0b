package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// TestMain lets the test binary stand in for the manager binary: with
// SMS_MANAGER_TEST_MAIN=1 it runs main with its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("SMS_MANAGER_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// `manager sandbox` is the isolated executor's child: a plugin mounted
// through it activates and answers a tool call.
// Seen failing with the sandbox subcommand not added to the root.
func TestSandboxServesTheIsolatedExecutor(t *testing.T) {
	exec, err := isolated.New(isolated.Options{
		Command: []string{os.Args[0], "sandbox"},
		Env:     []string{"SMS_MANAGER_TEST_MAIN=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := executortest.NewEnv(t, exec)
	m := kernel.Manifest{ID: "agent.echo", Version: "1"}
	code := []byte(`export default async function activate(cap) {
	await cap.contribute('tool', { name: 'echo', handler: (x) => 'echo ' + x });
}`)
	auth, err := env.K.Authorize(m, kernel.HashCode(code))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.K.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: code, Auth: auth}); err != nil {
		t.Fatal(err)
	}
	item := env.K.Contributions(executortest.PointTool)[0].Item.(map[string]any)
	out, err := item["handler"].(kernel.Func)(context.Background(), "hi")
	if err != nil || out != "echo hi" {
		t.Fatalf("tool call = %v, %v; want echo hi", out, err)
	}
	if err := env.K.Uninstall(context.Background(), "agent.echo", false); err != nil {
		t.Fatal(err)
	}
}

// The sandbox subcommand is hidden from the help people read.
// Seen failing with Hidden removed from newSandboxCommand.
func TestSandboxIsHidden(t *testing.T) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "sandbox") {
		t.Fatalf("help mentions the sandbox subcommand:\n%s", out.String())
	}
}

// --model takes scripted with a script file and refuses anything else.
// Seen failing with newModel returning nil for an unknown provider, and
// with modelKey ignoring the environment.
func TestNewModel(t *testing.T) {
	dir := t.TempDir()
	script, keyFile := dir+"/turns.json", dir+"/key"
	if err := os.WriteFile(script, []byte(`[[{"type":"text","text":"hi"}]]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"} {
		t.Setenv(env, "")
	}
	good := []modelFlags{
		{provider: "scripted", script: script},
		{provider: "anthropic", name: "m", keyFile: keyFile},
		{provider: "openai", name: "m", keyFile: keyFile},
		{provider: "openaicompat", name: "m", baseURL: "http://127.0.0.1:11434/v1"}, // a local server needs no key
	}
	for _, f := range good {
		if m, err := newModel(f); err != nil || m == nil {
			t.Fatalf("newModel(%+v) = %v, %v; want a model", f, m, err)
		}
	}
	bad := []struct {
		f    modelFlags
		want string
	}{
		{modelFlags{provider: "scripted"}, "needs --model-script"},
		{modelFlags{provider: "other"}, "want scripted, anthropic"},
		{modelFlags{script: script}, "need --model"},
		{modelFlags{provider: "anthropic", name: "m"}, "set ANTHROPIC_API_KEY"},
		{modelFlags{provider: "openai"}, "needs --model-name"},
		{modelFlags{provider: "openaicompat", name: "m"}, "needs --model-base-url"},
		{modelFlags{provider: "anthropic", name: "m", keyFile: dir + "/missing"}, "read model key"},
	}
	for _, tc := range bad {
		if _, err := newModel(tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("newModel(%+v) = %v, want an error containing %q", tc.f, err, tc.want)
		}
	}
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	if _, err := newModel(modelFlags{provider: "anthropic", name: "m"}); err != nil {
		t.Fatalf("a key from ANTHROPIC_API_KEY was not used: %v", err)
	}
	if m, err := newModel(modelFlags{}); err != nil || m != nil {
		t.Fatalf("no model = %v, %v; want nil, nil", m, err)
	}
}
