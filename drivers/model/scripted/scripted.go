package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/contracts"
)

// Model replays turns. It is safe for concurrent use; concurrent calls take
// turns in the order they arrive.
type Model struct {
	mu    sync.Mutex
	turns [][]contracts.Block
	next  int
	ids   int
}

var (
	_ contracts.ModelService  = (*Model)(nil)
	_ contracts.ModelStreamer = (*Model)(nil)
)

// New returns a model that answers with turns, one per call.
func New(turns [][]contracts.Block) *Model { return &Model{turns: turns} }

// Parse reads a script: a JSON array of turns, each an array of content
// blocks ({"type":"text","text":...} or {"type":"tool_use","name":...,
// "input":{...}}). Errors name the turn and block.
func Parse(raw []byte) (*Model, error) {
	var turns [][]contracts.Block
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&turns); err != nil {
		return nil, fmt.Errorf("scripted model: the script must be a JSON array of turns, each an array of blocks: %w", err)
	}
	for i, turn := range turns {
		for j, b := range turn {
			if err := checkBlock(b); err != nil {
				return nil, fmt.Errorf("scripted model: turn %d, block %d: %w", i+1, j+1, err)
			}
		}
	}
	return New(turns), nil
}

// Load reads a script file; see Parse.
func Load(path string) (*Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	return Parse(raw)
}

func checkBlock(b contracts.Block) error {
	switch b.Type {
	case contracts.BlockText, contracts.BlockThinking:
		return nil
	case contracts.BlockToolUse:
		if b.Name == "" {
			return fmt.Errorf("a tool_use block needs a name")
		}
		if len(b.Input) > 0 && !strings.HasPrefix(strings.TrimSpace(string(b.Input)), "{") {
			return fmt.Errorf("the input of tool_use %s must be a JSON object", b.Name)
		}
		return nil
	}
	return fmt.Errorf("block type %q: want text, thinking or tool_use", b.Type)
}

// Complete answers with the next turn.
func (m *Model) Complete(ctx context.Context, _ contracts.ModelRequest) (contracts.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return contracts.ModelResponse{}, fmt.Errorf("scripted model: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next >= len(m.turns) {
		return contracts.ModelResponse{}, fmt.Errorf("scripted model: the script has no turn %d (it has %d)", m.next+1, len(m.turns))
	}
	turn := m.turns[m.next]
	m.next++
	resp := contracts.ModelResponse{Content: make([]contracts.Block, len(turn)), StopReason: contracts.StopEndTurn}
	for i, b := range turn {
		if b.Type == contracts.BlockToolUse {
			resp.StopReason = contracts.StopToolUse
			if b.ID == "" {
				m.ids++
				b.ID = "toolu_" + strconv.Itoa(m.ids)
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage(`{}`)
			}
		}
		resp.Content[i] = b
	}
	return resp, nil
}

// Stream answers with the next turn as events: text arrives in word-sized
// deltas that add up to the turn's text.
func (m *Model) Stream(ctx context.Context, req contracts.ModelRequest) iter.Seq2[contracts.StreamEvent, error] {
	return func(yield func(contracts.StreamEvent, error) bool) {
		resp, err := m.Complete(ctx, req)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		for _, ev := range contracts.ResponseEvents(resp) {
			for _, part := range split(ev) {
				if !yield(part, nil) {
					return
				}
			}
		}
	}
}

// split breaks a text or thinking delta into word-sized deltas.
func split(ev contracts.StreamEvent) []contracts.StreamEvent {
	if ev.Type != contracts.EventTextDelta && ev.Type != contracts.EventThinkingDelta {
		return []contracts.StreamEvent{ev}
	}
	var out []contracts.StreamEvent
	for rest := ev.Text; rest != ""; {
		i := strings.IndexByte(rest[1:], ' ') + 1
		if i == 0 {
			i = len(rest)
		}
		out = append(out, contracts.StreamEvent{Type: ev.Type, Text: rest[:i]})
		rest = rest[i:]
	}
	return out
}
