package isolated

import (
	"fmt"
	"os"
	"path/filepath"
)

// SandboxProgram is the file name of the sandbox binary (cmd/sms-sandbox):
// a program that is only a child, linking goja and this package's side of
// the protocol and nothing else, so that each child maps and initializes
// little. The image carries it beside the kernel binaries.
const SandboxProgram = "sms-sandbox"

// Protocol names the version of the parent-child protocol. The parent
// passes it in EnvProtocol; a child built from other sources refuses to
// serve rather than misread messages.
const Protocol = "2"

// EnvProtocol is the variable that carries Protocol to the child.
const EnvProtocol = "SMS_SANDBOX_PROTOCOL"

// DefaultCommand is the child command of an Executor whose Options name
// none: SandboxProgram in this executable's directory when it is a
// regular executable file there, otherwise this executable with the
// argument "sandbox".
func DefaultCommand() ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the sandbox program: %w", err)
	}
	sibling := filepath.Join(filepath.Dir(self), SandboxProgram)
	if fi, err := os.Stat(sibling); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return []string{sibling}, nil
	}
	return []string{self, "sandbox"}, nil
}

// checkProtocol refuses a parent that speaks another protocol. A parent
// that names none (an embedder's own Command with its own Env) is served.
func checkProtocol() error {
	if got := os.Getenv(EnvProtocol); got != "" && got != Protocol {
		return fmt.Errorf("%s=%s: this sandbox speaks protocol %s; run the sandbox built with the kernel", EnvProtocol, got, Protocol)
	}
	return nil
}
