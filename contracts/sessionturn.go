package contracts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// turnEvent is one thing a running turn did: a block of text or thinking,
// a tool call (with where its answer goes), or its end.
type turnEvent struct {
	block  Block
	call   *Block
	reply  chan ToolOutcome
	end    bool
	resume string
	err    error
}

// liveTurn is a turn whose CLI runs. events is read by the conversation's
// Complete calls; pending (touched only by them) holds the replies of the
// tool calls handed to the agent loop.
type liveTurn struct {
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	events  chan turnEvent
	pending map[string]chan ToolOutcome
	acc     []Block
	wait    time.Duration
	// idPrefix makes the tool_use ids of every turn distinct: a
	// transcript replayed to an API driver must not repeat one.
	idPrefix string
	ids      atomic.Int64
}

// run starts turn on the backend and returns it live; it lasts at most
// MaxTurn.
func (m *SessionModel) run(turn SessionTurn) *liveTurn {
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.MaxTurn)
	prefix := make([]byte, 6)
	_, _ = rand.Read(prefix)
	t := &liveTurn{ctx: ctx, cancel: cancel, done: make(chan struct{}), events: make(chan turnEvent),
		pending: map[string]chan ToolOutcome{}, wait: m.opts.ToolWait, idPrefix: "toolu_cli_" + hex.EncodeToString(prefix) + "_"}
	go func() {
		defer close(t.done)
		resume, err := m.backend.Turn(ctx, turn, t)
		t.send(turnEvent{end: true, resume: resume, err: err})
	}()
	return t
}

// send hands ev to the conversation's Complete, unless the turn was
// stopped.
func (t *liveTurn) send(ev turnEvent) bool {
	select {
	case t.events <- ev:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// Text implements SessionSink.
func (t *liveTurn) Text(text string) {
	if text != "" {
		t.send(turnEvent{block: Block{Type: BlockText, Text: text}})
	}
}

// Thinking implements SessionSink.
func (t *liveTurn) Thinking(text string) {
	if text != "" {
		t.send(turnEvent{block: Block{Type: BlockThinking, Text: text}})
	}
}

// ToolCall implements SessionSink.
func (t *liveTurn) ToolCall(ctx context.Context, name string, input json.RawMessage) (ToolOutcome, error) {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	call := &Block{Type: BlockToolUse, ID: fmt.Sprintf("%s%d", t.idPrefix, t.ids.Add(1)), Name: name, Input: input}
	reply := make(chan ToolOutcome, 1)
	if !t.send(turnEvent{call: call, reply: reply}) {
		return ToolOutcome{}, errTurnEnded
	}
	timer := time.NewTimer(t.wait)
	defer timer.Stop()
	select {
	case out := <-reply:
		return out, nil
	case <-ctx.Done():
		return ToolOutcome{}, ctx.Err()
	case <-t.ctx.Done():
		return ToolOutcome{}, errTurnEnded
	case <-timer.C:
		return ToolOutcome{}, fmt.Errorf("the agent loop did not answer the call of %s within %s", name, t.wait)
	}
}

// answers reports whether msg is the agent loop's answer to this turn's
// tool calls: tool results for pending calls and nothing else (a user's
// new text starts a new turn instead).
func (t *liveTurn) answers(msg Message) bool {
	seen := map[string]bool{}
	for _, b := range msg.Content {
		if b.Type != BlockToolResult {
			return false
		}
		if _, ok := t.pending[b.ToolUseID]; !ok || seen[b.ToolUseID] {
			return false
		}
		seen[b.ToolUseID] = true
	}
	return len(seen) > 0
}

// deliver hands the tool results of msg to the calls waiting for them.
func (t *liveTurn) deliver(msg Message) {
	for _, b := range msg.Content {
		t.pending[b.ToolUseID] <- ToolOutcome{Content: b.Content, IsError: b.IsError}
		delete(t.pending, b.ToolUseID)
	}
}

// add appends a text or thinking block, joining it to the last block of
// the same type.
func (t *liveTurn) add(b Block) {
	if n := len(t.acc); n > 0 && t.acc[n-1].Type == b.Type {
		t.acc[n-1].Text += b.Text
		return
	}
	t.acc = append(t.acc, b)
}

// take returns the blocks gathered since the last response.
func (t *liveTurn) take() []Block {
	out := t.acc
	t.acc = nil
	if out == nil {
		out = []Block{}
	}
	return out
}

// priorTranscript renders the conversation before the user's message for
// a new session's prompt, keeping its most recent max bytes.
func priorTranscript(msgs []Message, maxBytes int) string {
	var lines []string
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				lines = append(lines, m.Role+": "+b.Text)
			case BlockToolUse:
				lines = append(lines, fmt.Sprintf("assistant called %s with %s", b.Name, b.Input))
			case BlockToolResult:
				lines = append(lines, "tool result: "+b.Content)
			}
		}
	}
	text := strings.Join(lines, "\n")
	if cut := len(text) - maxBytes; cut > 0 {
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++ // never split a character
		}
		text = "..." + text[cut:]
	}
	if text == "" {
		return ""
	}
	return "The conversation so far:\n" + text + "\n\nThe user's new message:\n"
}
