package isolated_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
)

// A child refuses a parent that names another protocol version, before it
// reads anything, and says which to run.
// Seen failing with ChildOptionsFromEnv not checking the protocol.
func TestChildRefusesAnotherProtocol(t *testing.T) {
	t.Setenv(isolated.EnvProtocol, "0")
	_, err := isolated.ChildOptionsFromEnv()
	if err == nil || !strings.Contains(err.Error(), "protocol "+isolated.Protocol) {
		t.Fatalf("ChildOptionsFromEnv with protocol 0: %v, want a refusal naming protocol %s", err, isolated.Protocol)
	}
	t.Setenv(isolated.EnvProtocol, isolated.Protocol)
	if _, err := isolated.ChildOptionsFromEnv(); err != nil {
		t.Fatalf("ChildOptionsFromEnv with this protocol: %v", err)
	}
}

// The default child is sms-sandbox beside the executable when it is an
// executable file there, and the executable's sandbox subcommand
// otherwise.
// Seen failing with DefaultCommand ignoring the sibling.
func TestDefaultCommandPrefersTheSandboxBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(filepath.Dir(self), isolated.SandboxProgram)
	if _, err := os.Stat(sibling); err == nil {
		t.Fatalf("%s exists already; the test would prove nothing", sibling)
	}
	if got, _ := isolated.DefaultCommand(); !slices.Equal(got, []string{self, "sandbox"}) {
		t.Fatalf("DefaultCommand without a sibling = %q, want %q", got, []string{self, "sandbox"})
	}
	if err := os.WriteFile(sibling, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(sibling) })
	if got, _ := isolated.DefaultCommand(); !slices.Equal(got, []string{self, "sandbox"}) {
		t.Fatalf("DefaultCommand with a sibling that is not executable = %q, want the subcommand", got)
	}
	if err := os.Chmod(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := isolated.DefaultCommand(); !slices.Equal(got, []string{sibling}) {
		t.Fatalf("DefaultCommand with an executable sibling = %q, want %q", got, []string{sibling})
	}
}
