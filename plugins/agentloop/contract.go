package agentloop

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
)

// PluginID is the id of the agent loop plugin.
const PluginID = "sms.agentloop"

// Requester is who the judge sees submitting the agent's plugins for a
// turn without a credential (an admin API without credentials, or a Go
// caller). A credential's turn submits under the credential's name, as the
// admin API does, so each chat user has their own share of what the judge
// and the executor bound per requester.
const Requester = "chat-agent"

// Key is the system-only key whose value is the Service.
const Key = "agent"

// Points the plugin defines; both are open to agent plugins.
const (
	// ToolPoint takes a Tool: {name, description, input_schema, handler}.
	ToolPoint = "tool"
	// PromptPoint takes a Prompt: {section, order, text}.
	PromptPoint = "prompt"
)

// EventTurn is the audit event appended after every finished turn.
const EventTurn = "chat/turn"

// DefaultMaxSteps is how many model calls a turn makes at most by default.
const DefaultMaxSteps = 8

// Event types of ChatStream.
const (
	EventTextDelta = "text_delta"
	// EventThinkingDelta is the model's reasoning, where its driver
	// shows it; it is not part of the reply.
	EventThinkingDelta = "thinking_delta"
	EventToolCall      = "tool_call"
	EventToolResult    = "tool_result"
	EventVerdict       = "verdict"
	// EventHalted says the budget stopped the turn; Text and Halt say why.
	EventHalted = "halted"
	EventDone   = "done"
	EventError  = "error"
)

// Service is the value of Key. Its methods are safe for concurrent use;
// turns of one session run one after another.
type Service interface {
	// Chat runs one turn of session with the user's text.
	Chat(ctx context.Context, session, text string) (Reply, error)
	// ChatStream runs one turn and streams its events; the last event is
	// done (with the reply) or error.
	ChatStream(ctx context.Context, session, text string) iter.Seq2[Event, error]
}

// Reply is the outcome of a turn: the model's final text and the tool calls
// it made on the way.
type Reply struct {
	Reply string `json:"reply"`
	Steps []Step `json:"steps"`
	// Halt is set when the tenant's budget stopped the turn before the
	// model finished: what it says is for the user.
	Halt *contracts.BudgetHalt `json:"halt,omitempty"`
}

// Step is one tool call of a turn.
type Step struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	Result  string          `json:"result"`
	IsError bool            `json:"isError,omitempty"`
}

// Event is one event of a streamed turn.
type Event struct {
	Type    string                `json:"type"`
	Text    string                `json:"text,omitempty"`
	Step    *Step                 `json:"step,omitempty"`
	Verdict *judge.Verdict        `json:"verdict,omitempty"`
	Reply   *Reply                `json:"reply,omitempty"`
	Halt    *contracts.BudgetHalt `json:"halt,omitempty"`
	Error   string                `json:"error,omitempty"`
}

// ToolFunc runs a tool with its checked input; the result is sent to the
// model as JSON (a string as it is).
type ToolFunc func(ctx context.Context, input map[string]any) (any, error)

// Tool is an item of ToolPoint from a system plugin. Agent plugins
// contribute the same shape as JSON with a function as handler.
type Tool struct {
	Name        string
	Description string
	// InputSchema is a JSON Schema object; the loop checks that the input
	// is an object, that required properties are present and that
	// properties have their primitive type.
	InputSchema json.RawMessage
	Handler     ToolFunc
}

// Prompt is an item of PromptPoint: a section of the system prompt.
// Sections are joined in ascending Order.
type Prompt struct {
	Section string `json:"section"`
	Order   int    `json:"order"`
	Text    string `json:"text"`
}

// Options configure the plugin. Every field is optional.
type Options struct {
	// MaxSteps caps the model calls of a turn; default DefaultMaxSteps.
	MaxSteps int
	// Identity is the first line of the system prompt.
	Identity string
	// Sessions keeps transcripts beyond the process; nil keeps them in
	// memory only. DatabaseSessions stores them in the tenant's database.
	Sessions SessionStore
}

// SessionStore keeps chat transcripts. Load is called the first time a
// session is used in a process and returns nil for a new session; Save is
// called after every successful turn with the whole transcript. A failing
// Save fails the turn. Implementations must be safe for concurrent use.
type SessionStore interface {
	Load(ctx context.Context, session string) ([]contracts.Message, error)
	Save(ctx context.Context, session string, history []contracts.Message) error
}
