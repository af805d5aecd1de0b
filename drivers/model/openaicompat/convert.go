package openaicompat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/sms-baseline/sms/contracts"
)

// params builds the request body for req.
func (m *Model) params(req contracts.ModelRequest) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: m.model}
	if m.maxTokens > 0 {
		p.MaxTokens = openai.Int(m.maxTokens)
	}
	if rs := m.reasoningSetting(); rs != nil {
		p.SetExtraFields(map[string]any{"reasoning": rs})
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		mps, err := toMessages(msg)
		if err != nil {
			return p, fmt.Errorf("openaicompat model: message %d: %w", i+1, err)
		}
		p.Messages = append(p.Messages, mps...)
	}
	for _, t := range req.Tools {
		schema := shared.FunctionParameters{}
		if len(t.InputSchema) > 0 {
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				return p, fmt.Errorf("openaicompat model: tool %s: input schema: %w", t.Name, err)
			}
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// toMessages maps one message: a user turn's tool results become role
// "tool" messages, its text one user message; an assistant turn becomes
// one message with its text and tool calls, and the reasoning details of
// its thinking (this driver's only) that the provider needs back.
func toMessages(msg contracts.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	var text strings.Builder
	var calls []openai.ChatCompletionMessageToolCallUnionParam
	for _, b := range msg.Content {
		switch b.Type {
		case contracts.BlockText:
			text.WriteString(b.Text)
		case contracts.BlockThinking:
		case contracts.BlockToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: b.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args}}})
		case contracts.BlockToolResult:
			content := b.Content
			if b.IsError {
				content = "error: " + content
			}
			out = append(out, openai.ToolMessage(content, b.ToolUseID))
		default:
			return nil, fmt.Errorf("block type %q is not supported", b.Type)
		}
	}
	switch msg.Role {
	case contracts.RoleUser:
		if text.Len() > 0 {
			out = append(out, openai.UserMessage(text.String()))
		}
	case contracts.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		details, err := replayDetails(msg.Content)
		if err != nil {
			return nil, err
		}
		if details != nil {
			a.SetExtraFields(map[string]any{"reasoning_details": details})
		}
		if text.Len() > 0 {
			a.Content.OfString = openai.String(text.String())
		}
		out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("role %q is not supported", msg.Role)
	}
	return out, nil
}

// call is a tool call of a response.
type call struct{ id, name, args string }

// accumulator assembles a streamed choice.
type accumulator struct {
	text      strings.Builder
	reasoning reasoning
	calls     []call
	finish    string
}

// add folds chunk in and returns its text and reasoning deltas.
func (a *accumulator) add(chunk openai.ChatCompletionChunk) (string, string) {
	if len(chunk.Choices) == 0 {
		return "", ""
	}
	c := chunk.Choices[0]
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	for _, tc := range c.Delta.ToolCalls {
		i := int(tc.Index)
		for len(a.calls) <= i {
			a.calls = append(a.calls, call{})
		}
		if tc.ID != "" {
			a.calls[i].id = tc.ID
		}
		a.calls[i].name += tc.Function.Name
		a.calls[i].args += tc.Function.Arguments
	}
	a.text.WriteString(c.Delta.Content)
	return c.Delta.Content, a.reasoning.addDelta(c.Delta.RawJSON())
}

// response builds the contracts response of a choice.
func response(r *reasoning, text string, calls []call, finish string) (contracts.ModelResponse, error) {
	out := contracts.ModelResponse{StopReason: contracts.StopEndTurn}
	if b, ok := r.block(); ok {
		out.Content = append(out.Content, b)
	}
	if text != "" {
		out.Content = append(out.Content, contracts.Block{Type: contracts.BlockText, Text: text})
	}
	for _, c := range calls {
		args := json.RawMessage(c.args)
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if !json.Valid(args) {
			return out, fmt.Errorf("openaicompat model: tool call %s: the arguments are not JSON", c.name)
		}
		out.Content = append(out.Content, contracts.Block{Type: contracts.BlockToolUse, ID: c.id, Name: c.name, Input: args})
		out.StopReason = contracts.StopToolUse
	}
	if finish == "length" {
		out.StopReason = contracts.StopMaxTokens
	}
	return out, nil
}

// bodyError explains a response without choices, such as an error object
// sent with HTTP 200: such a call fails, it never returns an empty response.
func bodyError(raw string) error {
	var body struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error != nil {
		return fmt.Errorf("openaicompat model: %s", body.Error.Message)
	}
	return fmt.Errorf("openaicompat model: the response has no choices")
}
