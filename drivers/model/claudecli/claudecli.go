package claudecli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli"
)

// Install is the command that installs the CLI.
const Install = "npm install -g @anthropic-ai/claude-code"

// gate is how long a tool call waits for the CLI to print the message
// that makes it.
const gate = 5 * time.Second

// Options configures a Model.
type Options struct {
	// Command is the claude executable, a path or a name on PATH; empty
	// means "claude".
	Command string
	// Model is the model the CLI uses; empty leaves it to the CLI.
	Model string
	// BaseURL points the CLI at another Messages API endpoint (a proxy
	// or a fake), through ANTHROPIC_BASE_URL.
	BaseURL string
	// Env is the environment the CLI's is taken from; nil takes this
	// process's. Only what a CLI needs is kept (agentcli.Environ): where
	// it finds its login (HOME) and its CLAUDE_, ANTHROPIC_ and cloud
	// providers' variables.
	Env []string
	// Effort is one of Efforts: how hard the CLI's model works; empty
	// leaves it to the CLI.
	Effort string
	// Session bounds the turns and conversations; its Name is set here.
	Session contracts.SessionOptions
}

// Efforts are the efforts the CLI takes, in increasing order.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// cli is what the driver says of the claude CLI.
var cli = agentcli.CLI{Driver: "claude-cli", Command: "claude", Install: Install, Login: "claude login", Efforts: Efforts}

// New returns a ModelService that runs the claude CLI, or a clear error
// when the CLI is missing.
func New(opts Options) (*contracts.SessionModel, error) {
	path, err := cli.Find(opts.Command, opts.Effort)
	if err != nil {
		return nil, err
	}
	opts.Session.Name = "claude-cli model"
	return contracts.NewSessionModel(&backend{path: path, opts: opts}, opts.Session), nil
}

// backend runs one `claude -p` per turn.
type backend struct {
	path string
	opts Options
}

// Turn implements contracts.SessionBackend.
func (b *backend) Turn(ctx context.Context, turn contracts.SessionTurn, sink contracts.SessionSink) (string, error) {
	ws, err := agentcli.Open(turn.Tools, sink, agentcli.ServeOptions{Gate: gate})
	if err != nil {
		return "", err
	}
	defer ws.Close()
	config, err := writeMCPConfig(ws)
	if err != nil {
		return "", err
	}
	system, err := ws.File(".system-prompt.txt", []byte(turn.System))
	if err != nil {
		return "", err
	}
	out := &output{sink: sink, tools: ws.Tools}
	cmd := agentcli.Command{Path: b.path, Args: b.args(turn, system, config), Dir: ws.Dir, Env: b.env(), Stdin: turn.Prompt}
	stderr, err := agentcli.Run(ctx, cmd, out.line)
	if err == nil {
		err = out.err
	}
	switch {
	case err != nil && ctx.Err() == nil:
		return "", explain(err, out, stderr)
	case err != nil:
		return "", err
	case !out.done:
		return "", fmt.Errorf("claude ended without a result: %s", stderr)
	}
	return out.session, nil
}

// writeMCPConfig writes the CLI's MCP configuration, which holds the
// server's token, to a file only this user reads (a command line is
// visible to every user of the machine) and returns its path.
func writeMCPConfig(ws *agentcli.Workspace) (string, error) {
	raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{agentcli.ServerName: map[string]any{
		"type": "http", "url": ws.Tools.URL, "headers": map[string]string{"Authorization": "Bearer " + ws.Tools.Token},
	}}})
	if err != nil {
		return "", err
	}
	return ws.File(".mcp-config.json", raw)
}

// args are the CLI's arguments: print mode with JSON events, the turn's
// system prompt (its file: a prompt of any size, which other users do not
// see in the process list), only the kernel's MCP server (its
// configuration file) and none of the CLI's own tools, and the session
// to resume.
func (b *backend) args(turn contracts.SessionTurn, systemFile, mcpConfig string) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose",
		"--system-prompt-file", systemFile,
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--tools", "", "--allowedTools", "mcp__" + agentcli.ServerName,
		"--setting-sources", "", "--disable-slash-commands"}
	if b.opts.Model != "" {
		args = append(args, "--model", b.opts.Model)
	}
	if b.opts.Effort != "" {
		args = append(args, "--effort", b.opts.Effort)
	}
	if turn.Resume != "" {
		args = append(args, "--resume", turn.Resume)
	}
	return args
}

func (b *backend) env() []string {
	env := agentcli.Environ(b.opts.Env, "CLAUDE_", "ANTHROPIC_", "AWS_", "GOOGLE_", "CLOUD_ML_")
	// A tool call waits for the agent loop as long as the bridge lets it.
	env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"MCP_TOOL_TIMEOUT="+strconv.Itoa(int(agentcli.ToolWait(b.opts.Session).Milliseconds())))
	if b.opts.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+b.opts.BaseURL)
	}
	return env
}

// output reads the CLI's stream-json events.
type output struct {
	sink    contracts.SessionSink
	tools   *agentcli.ToolServer
	session string
	done    bool
	result  string
	err     error
}

type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Parent    string `json:"parent_tool_use_id"`
	IsError   bool   `json:"is_error"`
	Status    int    `json:"error_status"`
	Error     string `json:"error"`
	Result    string `json:"result"`
	Message   struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
			Name     string `json:"name"`
		} `json:"content"`
	} `json:"message"`
}

func (o *output) line(raw []byte) error {
	var ev event
	if json.Unmarshal(raw, &ev) != nil {
		return nil // not an event: the CLI's other output
	}
	if ev.SessionID != "" {
		o.session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		// The CLI retries a refused login ten times, for minutes: stop
		// at the first.
		if ev.Subtype == "api_retry" && (ev.Status == 401 || ev.Status == 403 || ev.Error == "authentication_failed") {
			return fmt.Errorf("claude: the provider refused the login (%d %s)", ev.Status, ev.Error)
		}
	case "assistant":
		if ev.Parent != "" {
			return nil
		}
		for _, c := range ev.Message.Content {
			switch c.Type {
			case "text":
				o.sink.Text(c.Text)
			case "thinking":
				o.sink.Thinking(c.Thinking)
			case "tool_use":
				if _, ok := agentcli.KernelTool(c.Name); ok {
					o.tools.Announce()
				}
			}
		}
	case "result":
		o.done, o.result = true, ev.Result
		if ev.IsError || ev.Subtype != "success" {
			o.err = fmt.Errorf("claude: %s: %s", ev.Subtype, ev.Result)
		}
	}
	return nil
}

// explain turns a failed run into an error that says what to do.
func explain(err error, out *output, stderr string) error {
	text := strings.ToLower(out.result + " " + stderr)
	text += " " + strings.ToLower(err.Error())
	for _, hint := range []string{"login", "log in", "api key", "authentication", "401"} {
		if strings.Contains(text, hint) {
			return fmt.Errorf("claude is not logged in or its login was refused; run `claude login` (%w)", err)
		}
	}
	if stderr != "" && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %s", err, stderr)
	}
	return err
}
