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
	m := kernel.Manifest{ID: "agent.echo", Version: "1", Points: []string{"tool"}}
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

// `manager kernel` hands its flags to kernelcmd.Run: a bad --executor is
// refused with the flag named, before any store is opened.
// Seen failing with BindFlags bound to a Config other than the one Run gets.
func TestKernelCommandPassesItsFlags(t *testing.T) {
	// Were the flags lost, the kernel would open the default store in the
	// working directory and serve until ctx ends: both are made harmless.
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRootCommand()
	root.SetArgs([]string{"kernel", "--executor", "nope", "--listen", "127.0.0.1:0"})
	err := root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), `--executor "nope"`) {
		t.Fatalf("manager kernel --executor nope = %v, want an error naming --executor", err)
	}
}

// `manager dev` checks its model flags before starting anything: a
// missing script is refused with the flag named.
// Seen failing with devModel not called: the control plane started and
// the test ran until killed.
func TestDevRefusesAMissingScript(t *testing.T) {
	root := newRootCommand()
	root.SetArgs([]string{"dev", "--dir", t.TempDir(), "--model-script", "no/such/script.json"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--model-script") || !strings.Contains(err.Error(), "no/such/script.json") {
		t.Fatalf("manager dev with a missing script = %v, want an error naming --model-script and the file", err)
	}
}

// `manager dev` refuses a single-user model as the tenants' default: its
// kernels serve tenants, and gpt-oauth spends one person's login. Seen
// failing with devModel looking the model up in every driver.
func TestDevRefusesASingleUserModel(t *testing.T) {
	root := newRootCommand()
	root.SetArgs([]string{"dev", "--dir", t.TempDir(), "--model", "gpt-oauth", "--model-name", "m"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), `--model "gpt-oauth"`) {
		t.Fatalf("manager dev --model gpt-oauth = %v, want a refusal naming it", err)
	}
}
