package contracts

import (
	"context"
	"encoding/json"
	"iter"
)

// ModelKey is the kernel key whose value is the tenant's ModelService. It is
// system-only: agent code never talks to the model directly.
const ModelKey = "model"

// Block types of a message's content, as in the Messages API.
const (
	BlockText       = "text"
	BlockThinking   = "thinking"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
)

// Block is one piece of a message: text, a model's thinking, a tool call
// (tool_use) or the host's answer to one (tool_result).
type Block struct {
	Type string `json:"type"`
	// Text is the text of a text or thinking block.
	Text string `json:"text,omitempty"`
	// Signature is the provider's token for replaying a thinking block.
	Signature string `json:"signature,omitempty"`
	// Origin names the driver whose provider wrote a thinking block
	// (anthropic, openai, openaicompat). A driver replays only thinking
	// of its own origin (or, for blocks kept from before origins were
	// recorded, of the shape its provider writes), so a conversation
	// that changes models never sends one provider's tokens to another.
	Origin string `json:"origin,omitempty"`
	// ID, Name and Input describe a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError describe a tool_result block.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Tool is a tool the model may call; InputSchema is a JSON Schema object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ModelRequest is one stateless call: the whole conversation so far.
type ModelRequest struct {
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
}

// Stop reasons of a response.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// ModelResponse is the assistant's turn.
type ModelResponse struct {
	Content    []Block `json:"content"`
	StopReason string  `json:"stop_reason"`
	// Usage is the tokens the provider billed for the call, where the
	// driver's provider reports them; nil when it does not (a host that
	// accounts tokens then estimates them, see TokenEstimate).
	Usage *TokenUsage `json:"usage,omitempty"`
}

// TokenUsage is what one model call consumed, as its provider reports it.
type TokenUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// TokenEstimate is the usage a host charges for a call whose driver
// reports none: a token for every four bytes of the request's JSON and of
// the response's content, rounded up, so a driver without usage never
// makes its calls free.
func TokenEstimate(req ModelRequest, resp ModelResponse) TokenUsage {
	in, _ := json.Marshal(req)
	out, _ := json.Marshal(resp.Content)
	return TokenUsage{InputTokens: int64(len(in)+3) / 4, OutputTokens: int64(len(out)+3) / 4}
}

// ModelService is what a model driver provides. Complete is stateless:
// every call carries the whole conversation. It is safe for concurrent use
// and honours ctx; drivers retry rate limits and server errors themselves,
// so a returned error is final for this call.
type ModelService interface {
	Complete(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// Stream event types.
const (
	EventTextDelta     = "text_delta"
	EventThinkingDelta = "thinking_delta"
	EventToolUse       = "tool_use"
	EventDone          = "done"
)

// StreamEvent is one event of a streamed response: a text or thinking
// delta, a complete tool_use block, or done with the whole response, which
// equals what Complete would have returned.
type StreamEvent struct {
	Type     string         `json:"type"`
	Text     string         `json:"text,omitempty"`
	Block    *Block         `json:"block,omitempty"`
	Response *ModelResponse `json:"response,omitempty"`
}

// ModelStreamer is the optional streaming capability of a ModelService,
// found by type assertion. The sequence ends after the done event or at
// the first error.
type ModelStreamer interface {
	Stream(ctx context.Context, req ModelRequest) iter.Seq2[StreamEvent, error]
}

// Stream streams req through m: natively when m implements ModelStreamer,
// otherwise by calling Complete and replaying its response as events.
func Stream(ctx context.Context, m ModelService, req ModelRequest) iter.Seq2[StreamEvent, error] {
	if s, ok := m.(ModelStreamer); ok {
		return s.Stream(ctx, req)
	}
	return func(yield func(StreamEvent, error) bool) {
		resp, err := m.Complete(ctx, req)
		if err != nil {
			yield(StreamEvent{}, err)
			return
		}
		for _, ev := range ResponseEvents(resp) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// ResponseEvents returns the events that stream resp: one delta per text
// or thinking block, one event per tool_use block, then done.
func ResponseEvents(resp ModelResponse) []StreamEvent {
	var out []StreamEvent
	for i := range resp.Content {
		b := resp.Content[i]
		switch b.Type {
		case BlockText:
			out = append(out, StreamEvent{Type: EventTextDelta, Text: b.Text})
		case BlockThinking:
			out = append(out, StreamEvent{Type: EventThinkingDelta, Text: b.Text})
		case BlockToolUse:
			out = append(out, StreamEvent{Type: EventToolUse, Block: &b})
		}
	}
	return append(out, StreamEvent{Type: EventDone, Response: &resp})
}
