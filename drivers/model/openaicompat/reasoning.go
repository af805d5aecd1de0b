package openaicompat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Origin marks the thinking blocks this driver writes and replays.
const Origin = "openaicompat"

// Efforts are the efforts OpenRouter's unified reasoning setting takes,
// in increasing order.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// reasoningSetting is the request's reasoning object (OpenRouter's
// unified setting), or nil for none: an effort or a token budget.
func (m *Model) reasoningSetting() map[string]any {
	switch {
	case m.effort != "":
		return map[string]any{"effort": m.effort}
	case m.budget > 0:
		return map[string]any{"max_tokens": m.budget}
	}
	return nil
}

// reasoning is what a response says of the model's reasoning: its text
// and its details, which the provider needs back, unchanged, with the
// assistant turn (before its tool calls) to go on reasoning.
type reasoning struct {
	text    strings.Builder
	details []map[string]any
}

// block is the thinking block carrying r, or false when there is none.
// Its signature is the details' JSON, the only thing replayed.
func (r *reasoning) block() (contracts.Block, bool) {
	if r.text.Len() == 0 && len(r.details) == 0 {
		return contracts.Block{}, false
	}
	b := contracts.Block{Type: contracts.BlockThinking, Text: r.text.String(), Origin: Origin}
	if len(r.details) > 0 {
		raw, _ := json.Marshal(r.details)
		b.Signature = string(raw)
	}
	return b, true
}

// messageReasoning reads a whole message's reasoning fields.
func messageReasoning(raw string) (*reasoning, error) {
	var m struct {
		Reasoning        string           `json:"reasoning"`
		ReasoningDetails []map[string]any `json:"reasoning_details"`
	}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("openaicompat model: message: %w", err)
		}
	}
	r := &reasoning{details: m.ReasoningDetails}
	r.text.WriteString(m.Reasoning)
	return r, nil
}

// addDelta folds a streamed delta's reasoning in and returns its text.
// Details arrive in pieces: those with the same index are one detail,
// their text, summary and data joined, their other fields the last seen.
func (r *reasoning) addDelta(raw string) string {
	var d struct {
		Reasoning        string           `json:"reasoning"`
		ReasoningDetails []map[string]any `json:"reasoning_details"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &d) != nil {
		return ""
	}
	for _, piece := range d.ReasoningDetails {
		r.merge(piece)
	}
	r.text.WriteString(d.Reasoning)
	return d.Reasoning
}

func (r *reasoning) merge(piece map[string]any) {
	idx, hasIndex := piece["index"].(float64)
	for _, detail := range r.details {
		if i, ok := detail["index"].(float64); hasIndex && ok && i == idx && detail["type"] == piece["type"] {
			for k, v := range piece {
				prev, isText := detail[k].(string)
				next, ok := v.(string)
				if isText && ok && (k == "text" || k == "summary" || k == "data") {
					detail[k] = prev + next
				} else {
					detail[k] = v
				}
			}
			return
		}
	}
	r.details = append(r.details, piece)
}

// replayDetails returns the reasoning details of an assistant turn's
// thinking blocks written by this driver, or nil.
func replayDetails(blocks []contracts.Block) (json.RawMessage, error) {
	var all []json.RawMessage
	for _, b := range blocks {
		if b.Type != contracts.BlockThinking || b.Origin != Origin || b.Signature == "" {
			continue
		}
		var details []json.RawMessage
		if err := json.Unmarshal([]byte(b.Signature), &details); err != nil {
			return nil, fmt.Errorf("a thinking block's reasoning details are not a JSON array: %w", err)
		}
		all = append(all, details...)
	}
	if all == nil {
		return nil, nil
	}
	return json.Marshal(all)
}

// choiceError reports the error a provider sends with HTTP 200 inside a
// choice or a chunk (OpenRouter: an error object, or finish_reason
// "error"), so the call fails instead of returning what came before it.
func choiceError(raw string) error {
	var body struct {
		Error *struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
		FinishReason string `json:"finish_reason"`
		Choices      []struct {
			FinishReason string `json:"finish_reason"`
			Error        *struct {
				Message string `json:"message"`
				Code    any    `json:"code"`
			} `json:"error"`
		} `json:"choices"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &body) != nil {
		return nil
	}
	if body.Error != nil {
		return fmt.Errorf("openaicompat model: the provider answered with an error (code %v): %s", body.Error.Code, body.Error.Message)
	}
	for _, c := range body.Choices {
		if c.Error != nil {
			return fmt.Errorf("openaicompat model: the provider answered with an error (code %v): %s", c.Error.Code, c.Error.Message)
		}
		if c.FinishReason == "error" {
			return errors.New("openaicompat model: the provider ended the answer with an error")
		}
	}
	return nil
}
