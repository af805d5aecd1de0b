package agentcli

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// CLI is what a driver says of the agent CLI it runs.
type CLI struct {
	// Driver is the driver's name ("claude-cli"), in errors.
	Driver string
	// Command is the executable a driver runs by default ("claude").
	Command string
	// Install installs the CLI; Login logs it in. Errors name them.
	Install string
	Login   string
	// Efforts are the efforts the CLI takes, in increasing order.
	Efforts []string
}

// Find returns the path of command (c.Command when empty), checking
// effort against c.Efforts: what a driver's New does first.
func (c CLI) Find(command, effort string) (string, error) {
	if command == "" {
		command = c.Command
	}
	if effort != "" && !slices.Contains(c.Efforts, effort) {
		return "", &contracts.SettingError{Setting: contracts.ModelEffort,
			Err: fmt.Errorf("%s takes %s, not %q", c.Driver, contracts.OrList(c.Efforts), effort)}
	}
	path, err := Lookup(command, c.Install+"` and run `"+c.Login)
	if err != nil {
		return "", fmt.Errorf("%s model: %w", c.Driver, err)
	}
	return path, nil
}

// ToolWait is how long a tool call of a SessionModel with opts waits:
// the timeout a CLI's MCP client must not undercut.
func ToolWait(opts contracts.SessionOptions) time.Duration {
	if opts.ToolWait > 0 {
		return opts.ToolWait
	}
	return contracts.DefaultSessionToolWait
}

// Workspace is what one turn's CLI runs with: the MCP server of the
// turn's tools and an empty scratch directory, where the CLI runs and
// finds its files.
type Workspace struct {
	Tools *ToolServer
	Dir   string
}

// Open starts the turn's tool server and makes its scratch directory.
func Open(tools []contracts.Tool, sink contracts.SessionSink, opts ServeOptions) (*Workspace, error) {
	server, err := Serve(tools, sink, opts)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sms-agent-cli-")
	if err != nil {
		_ = server.Close()
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	return &Workspace{Tools: server, Dir: dir}, nil
}

// File writes a file only this user reads into the scratch directory
// and returns its path: what a CLI must not get on its command line,
// which every user of the machine can read.
func (w *Workspace) File(name string, data []byte) (string, error) {
	path := w.Dir + string(os.PathSeparator) + name
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return path, nil
}

// Close stops the tool server and removes the scratch directory.
func (w *Workspace) Close() {
	_ = w.Tools.Close()
	_ = os.RemoveAll(w.Dir)
}
