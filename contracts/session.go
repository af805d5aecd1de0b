package contracts

import (
	"context"
	"encoding/json"
)

// An agent CLI (claude, codex) runs its own loop: it calls the model, and
// it calls tools itself, over MCP. The agent loop of the kernel, on the
// other hand, calls a stateless ModelService and runs the tools it is
// handed back. SessionModel joins the two: a tool call of the CLI blocks
// until the agent loop's next Complete delivers the matching tool_result,
// and what the CLI said before the call comes back as one turn, ending in
// the tool_use. A CLI driver supplies only a SessionBackend: how to run
// one turn of its CLI and how to read what the CLI prints.

// SessionTurn is one turn an agent CLI runs.
type SessionTurn struct {
	// System is the system prompt.
	System string
	// Tools are the tools the CLI may call, and the only ones.
	Tools []Tool
	// Prompt is the user's message.
	Prompt string
	// Resume is the CLI's own session id to continue, as a previous
	// turn's Turn returned it; empty starts a new session, and then
	// Prompt carries the conversation so far.
	Resume string
}

// ToolOutcome is the answer to one tool call of an agent CLI.
type ToolOutcome struct {
	// Content is the tool's result, as the agent loop's tool_result
	// block holds it.
	Content string
	// IsError says the call failed; Content says why.
	IsError bool
}

// SessionSink receives what an agent CLI does during a turn. Its methods
// are safe for concurrent use.
type SessionSink interface {
	// Text reports text the CLI's model wrote.
	Text(text string)
	// Thinking reports the CLI's model's reasoning, when it shows it.
	Thinking(text string)
	// ToolCall reports a call of one of the turn's tools and blocks
	// until the agent loop answers it, the turn ends or ctx is done.
	ToolCall(ctx context.Context, name string, input json.RawMessage) (ToolOutcome, error)
}

// SessionBackend runs an agent CLI's turns.
type SessionBackend interface {
	// Turn runs one turn to its end, reporting to sink as it goes, and
	// returns the session id a later turn resumes. It honours ctx: when
	// ctx ends, the CLI is stopped and Turn returns.
	Turn(ctx context.Context, turn SessionTurn, sink SessionSink) (resume string, err error)
}

type conversationKey struct{}

// WithConversation returns ctx carrying the id of the conversation a model
// call belongs to. A model that keeps state per conversation (a
// SessionModel) reads it; the agent loop sets it to its session. Stateless
// models ignore it.
func WithConversation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, conversationKey{}, id)
}

// ConversationOf returns the conversation id ctx carries, or "".
func ConversationOf(ctx context.Context) string {
	id, _ := ctx.Value(conversationKey{}).(string)
	return id
}
