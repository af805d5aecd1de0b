package codexcli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli"
)

// Install is the command that installs the CLI.
const Install = "npm install -g @openai/codex"

// gate is how long a tool call waits for the CLI to print the item that
// makes it.
const gate = 5 * time.Second

// maxSystem bounds the system prompt, which codex takes on its command
// line (an argument may not pass 128 KiB).
const maxSystem = 96 << 10

// tokenEnv is the variable the CLI reads the MCP server's token from.
const tokenEnv = "SMS_MCP_TOKEN"

// ownTools are the features that give codex tools of its own: its shell
// (which, even read-only, reads every file and variable the kernel's user
// can), images, sub-agents, goals, apps, plugins and browsers. All are
// turned off; the kernel's tools are the only ones left.
var ownTools = []string{"shell_tool", "unified_exec", "view_image", "image_generation", "multi_agent", "multi_agent_v2",
	"goals", "apps", "plugins", "remote_plugin", "browser_use", "browser_use_external", "in_app_browser", "computer_use",
	"skill_search", "skill_mcp_dependency_install", "shell_snapshot"}

// Options configures a Model.
type Options struct {
	// Command is the codex executable, a path or a name on PATH; empty
	// means "codex".
	Command string
	// Model is the model the CLI uses; empty leaves it to the CLI.
	Model string
	// BaseURL points the CLI at another Responses API endpoint (a proxy
	// or a fake), with the key in OPENAI_API_KEY; empty uses the CLI's
	// login.
	BaseURL string
	// Env is the environment the CLI's is taken from; nil takes this
	// process's. Only what a CLI needs is kept (agentcli.Environ): where
	// it finds its login (CODEX_HOME or HOME) and OPENAI_ variables.
	Env []string
	// Effort is one of Efforts: how hard the CLI's model works; empty
	// leaves it to the CLI.
	Effort string
	// Session bounds the turns and conversations; its Name is set here.
	Session contracts.SessionOptions
}

// Efforts are the efforts the CLI takes, in increasing order.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// cli is what the driver says of the codex CLI.
var cli = agentcli.CLI{Driver: "codex-cli", Command: "codex", Install: Install, Login: "codex login", Efforts: Efforts}

// New returns a ModelService that runs `codex exec`, or a clear error
// when the CLI is missing.
func New(opts Options) (*contracts.SessionModel, error) {
	path, err := cli.Find(opts.Command, opts.Effort)
	if err != nil {
		return nil, err
	}
	opts.Session.Name = "codex-cli model"
	return contracts.NewSessionModel(&backend{path: path, opts: opts}, opts.Session), nil
}

// backend runs one `codex exec` per turn.
type backend struct {
	path string
	opts Options
}

// Turn implements contracts.SessionBackend.
func (b *backend) Turn(ctx context.Context, turn contracts.SessionTurn, sink contracts.SessionSink) (string, error) {
	if len(turn.System) > maxSystem {
		return "", fmt.Errorf("the system prompt is %d bytes; codex takes it on its command line, at most %d", len(turn.System), maxSystem)
	}
	ws, err := agentcli.Open(turn.Tools, sink, agentcli.ServeOptions{ReadOnly: true, Gate: gate})
	if err != nil {
		return "", err
	}
	defer ws.Close()
	out := &output{sink: sink, tools: ws.Tools}
	cmd := agentcli.Command{Path: b.path, Args: b.args(turn, ws.Tools, ws.Dir), Dir: ws.Dir, Env: b.env(ws.Tools), Stdin: turn.Prompt}
	stderr, err := agentcli.Run(ctx, cmd, out.line)
	if err == nil {
		err = out.err
	}
	switch {
	case err != nil && ctx.Err() == nil:
		return "", explain(err, stderr)
	case err != nil:
		return "", err
	case !out.done:
		return "", fmt.Errorf("codex ended without finishing its turn: %s", stderr)
	}
	return out.thread, nil
}

// args are the CLI's arguments: JSON events, a read-only sandbox in the
// scratch directory without network or web search, the system prompt as
// developer instructions, the kernel's MCP server, and the thread to
// resume. The prompt comes on stdin ("-").
func (b *backend) args(turn contracts.SessionTurn, tools *agentcli.ToolServer, dir string) []string {
	args := []string{"exec"}
	if turn.Resume != "" {
		args = append(args, "resume")
	}
	set := func(key, value string) { args = append(args, "-c", key+"="+value) }
	args = append(args, "--json", "--skip-git-repo-check")
	for _, feature := range ownTools {
		args = append(args, "--disable", feature)
	}
	set("sandbox_mode", `"read-only"`)
	set("approval_policy", `"never"`)
	set("web_search", `"disabled"`)
	set("developer_instructions", tomlString(turn.System))
	set("mcp_servers."+agentcli.ServerName+".url", tomlString(tools.URL))
	set("mcp_servers."+agentcli.ServerName+".bearer_token_env_var", tomlString(tokenEnv))
	// A tool call waits for the agent loop as long as the bridge lets it.
	set("mcp_servers."+agentcli.ServerName+".tool_timeout_sec", strconv.Itoa(int(agentcli.ToolWait(b.opts.Session).Seconds())))
	if b.opts.BaseURL != "" {
		set("model_provider", `"sms"`)
		set("model_providers.sms", fmt.Sprintf(`{name="sms",base_url=%s,wire_api="responses",env_key="OPENAI_API_KEY"}`,
			tomlString(b.opts.BaseURL)))
	}
	if b.opts.Model != "" {
		set("model", tomlString(b.opts.Model))
	}
	if b.opts.Effort != "" {
		set("model_reasoning_effort", tomlString(b.opts.Effort))
	}
	if turn.Resume != "" {
		return append(args, turn.Resume, "-")
	}
	return append(args, "-C", dir, "-")
}

func (b *backend) env(tools *agentcli.ToolServer) []string {
	env := agentcli.Environ(b.opts.Env, "CODEX_", "OPENAI_")
	return append(env, tokenEnv+"="+tools.Token)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\u%04X`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// output reads the CLI's JSON events.
type output struct {
	sink   contracts.SessionSink
	tools  *agentcli.ToolServer
	thread string
	done   bool
	err    error
}

type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Server string `json:"server"`
	} `json:"item"`
}

func (o *output) line(raw []byte) error {
	var ev event
	if json.Unmarshal(raw, &ev) != nil {
		return nil
	}
	switch ev.Type {
	case "thread.started":
		o.thread = ev.ThreadID
	case "item.started":
		if ev.Item.Type == "mcp_tool_call" && ev.Item.Server == agentcli.ServerName {
			o.tools.Announce()
		}
	case "item.completed":
		switch ev.Item.Type {
		case "agent_message":
			o.sink.Text(ev.Item.Text)
		case "reasoning":
			o.sink.Thinking(ev.Item.Text)
		}
	case "turn.completed":
		o.done = true
	case "turn.failed":
		o.err = fmt.Errorf("codex: the turn failed: %s", ev.failure())
	case "error":
		o.err = fmt.Errorf("codex: %s", ev.failure())
	}
	return nil
}

func (ev event) failure() string {
	if ev.Error != nil {
		return ev.Error.Message
	}
	return ev.Message
}

// explain turns a failed run into an error that says what to do.
func explain(err error, stderr string) error {
	text := strings.ToLower(err.Error() + " " + stderr)
	for _, hint := range []string{"login", "log in", "401", "unauthorized", "api key"} {
		if strings.Contains(text, hint) {
			return fmt.Errorf("codex is not logged in or its login was refused; run `codex login` (%w)", err)
		}
	}
	if stderr != "" {
		return fmt.Errorf("%w: %s", err, stderr)
	}
	return err
}
