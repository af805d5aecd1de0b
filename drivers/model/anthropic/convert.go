package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/sms-baseline/sms/contracts"
)

// params builds the request body for req.
func (m *Model) params(req contracts.ModelRequest) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: m.model, MaxTokens: m.maxTokens}
	switch {
	case m.budget > 0:
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(m.budget)
	case m.effort != "":
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	}
	if m.effort != "" {
		p.OutputConfig = sdk.OutputConfigParam{Effort: sdk.OutputConfigEffort(m.effort)}
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for i, msg := range req.Messages {
		mp, err := toMessage(msg)
		if err != nil {
			return p, fmt.Errorf("anthropic model: message %d: %w", i+1, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, t := range req.Tools {
		tp, err := toTool(t)
		if err != nil {
			return p, fmt.Errorf("anthropic model: tool %s: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, tp)
	}
	return p, nil
}

func toMessage(msg contracts.Message) (sdk.MessageParam, error) {
	var blocks []sdk.ContentBlockParamUnion
	for _, b := range msg.Content {
		switch b.Type {
		case contracts.BlockText:
			blocks = append(blocks, sdk.NewTextBlock(b.Text))
		case contracts.BlockThinking:
			// The API accepts a thinking block back only with its
			// signature; one without it cannot be replayed.
			if b.Signature != "" && b.ID == "" && (b.Origin == "" || b.Origin == Origin) {
				blocks = append(blocks, sdk.NewThinkingBlock(b.Signature, b.Text))
			}
		case contracts.BlockToolUse:
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, sdk.NewToolUseBlock(b.ID, input, b.Name))
		case contracts.BlockToolResult:
			blocks = append(blocks, sdk.NewToolResultBlock(b.ToolUseID, b.Content, b.IsError))
		default:
			return sdk.MessageParam{}, fmt.Errorf("block type %q is not supported", b.Type)
		}
	}
	switch msg.Role {
	case contracts.RoleUser:
		return sdk.NewUserMessage(blocks...), nil
	case contracts.RoleAssistant:
		return sdk.NewAssistantMessage(blocks...), nil
	}
	return sdk.MessageParam{}, fmt.Errorf("role %q is not supported", msg.Role)
}

// toTool sends the tool's input schema as given; an empty schema becomes
// an empty object schema.
func toTool(t contracts.Tool) (sdk.ToolUnionParam, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	if !json.Valid(schema) {
		return sdk.ToolUnionParam{}, fmt.Errorf("the input schema is not valid JSON")
	}
	u := sdk.ToolUnionParamOfTool(param.Override[sdk.ToolInputSchemaParam](schema), t.Name)
	if t.Description != "" {
		u.OfTool.Description = sdk.String(t.Description)
	}
	return u, nil
}

func fromMessage(msg *sdk.Message) (contracts.ModelResponse, error) {
	var out contracts.ModelResponse
	for _, cb := range msg.Content {
		switch cb.Type {
		case contracts.BlockText:
			out.Content = append(out.Content, contracts.Block{Type: contracts.BlockText, Text: cb.Text})
		case contracts.BlockThinking:
			out.Content = append(out.Content, contracts.Block{Type: contracts.BlockThinking, Text: cb.Thinking, Signature: cb.Signature, Origin: Origin})
		case contracts.BlockToolUse:
			out.Content = append(out.Content, toolUseBlock(cb))
		}
	}
	switch msg.StopReason {
	case sdk.StopReasonToolUse:
		out.StopReason = contracts.StopToolUse
	case sdk.StopReasonMaxTokens:
		out.StopReason = contracts.StopMaxTokens
	case "":
		return out, fmt.Errorf("anthropic model: the response has no stop reason")
	default:
		out.StopReason = contracts.StopEndTurn
	}
	out.Usage = usage(msg.Usage)
	return out, nil
}

// usage is what the provider billed, cache reads and writes counted as
// input; nil when the message carries none.
func usage(u sdk.Usage) *contracts.TokenUsage {
	in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	if in == 0 && u.OutputTokens == 0 {
		return nil
	}
	return &contracts.TokenUsage{InputTokens: in, OutputTokens: u.OutputTokens}
}

func toolUseBlock(cb sdk.ContentBlockUnion) contracts.Block {
	input := append(json.RawMessage(nil), cb.Input...)
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return contracts.Block{Type: contracts.BlockToolUse, ID: cb.ID, Name: cb.Name, Input: input}
}
