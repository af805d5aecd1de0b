package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/sms-baseline/sms/contracts"
)

// toItems maps one message to input items, keeping the order of its
// blocks: text becomes a message item, tool_use a function_call and
// tool_result a function_call_output, and thinking the reasoning item it
// came from (its id and encrypted content), which reasoning models need
// replayed before their function calls when nothing is stored server-side.
func toItems(msg contracts.Message) ([]responses.ResponseInputItemUnionParam, error) {
	var role responses.EasyInputMessageRole
	switch msg.Role {
	case contracts.RoleUser:
		role = responses.EasyInputMessageRoleUser
	case contracts.RoleAssistant:
		role = responses.EasyInputMessageRoleAssistant
	default:
		return nil, fmt.Errorf("role %q is not supported", msg.Role)
	}
	var out []responses.ResponseInputItemUnionParam
	for _, b := range msg.Content {
		switch b.Type {
		case contracts.BlockText:
			out = append(out, responses.ResponseInputItemParamOfMessage(b.Text, role))
		case contracts.BlockThinking:
			if b.ID == "" || (b.Origin != "" && b.Origin != Origin) {
				continue // thinking from another provider cannot be replayed here
			}
			summary := []responses.ResponseReasoningItemSummaryParam{}
			if b.Text != "" {
				summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: b.Text})
			}
			item := responses.ResponseInputItemParamOfReasoning(b.ID, summary)
			if b.Signature != "" {
				item.OfReasoning.EncryptedContent = openai.String(b.Signature)
			}
			out = append(out, item)
		case contracts.BlockToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(args, b.ID, b.Name))
		case contracts.BlockToolResult:
			content := b.Content
			if b.IsError {
				content = "error: " + content
			}
			item := responses.ResponseInputItemParamOfFunctionCallOutput(content)
			item.OfFunctionCallOutput.CallID = openai.String(b.ToolUseID)
			out = append(out, item)
		default:
			return nil, fmt.Errorf("block type %q is not supported", b.Type)
		}
	}
	return out, nil
}

func toTool(t contracts.Tool) (responses.ToolUnionParam, error) {
	schema := map[string]any{}
	if len(t.InputSchema) > 0 {
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return responses.ToolUnionParam{}, fmt.Errorf("input schema: %w", err)
		}
	}
	tool := responses.ToolParamOfFunction(t.Name, schema, false)
	if t.Description != "" {
		tool.OfFunction.Description = openai.String(t.Description)
	}
	return tool, nil
}

// wireResponse is the part of a Responses API response the driver reads.
type wireResponse struct {
	Object string `json:"object"`
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Encrypted string `json:"encrypted_content"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	} `json:"output"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// fromRaw maps a response body. An error object or a failed status, even
// with HTTP 200, is an error.
func fromRaw(raw string) (contracts.ModelResponse, error) {
	var w wireResponse
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return contracts.ModelResponse{}, fmt.Errorf("openai model: response body: %w", err)
	}
	if w.Error != nil {
		return contracts.ModelResponse{}, fmt.Errorf("openai model: %s: %s", w.Error.Code, w.Error.Message)
	}
	if w.Object != "response" || w.Status == "failed" || w.Status == "cancelled" {
		return contracts.ModelResponse{}, fmt.Errorf("openai model: unexpected response (object %q, status %q)", w.Object, w.Status)
	}
	out := contracts.ModelResponse{StopReason: contracts.StopEndTurn}
	if w.Usage != nil {
		out.Usage = &contracts.TokenUsage{InputTokens: w.Usage.InputTokens, OutputTokens: w.Usage.OutputTokens}
	}
	for _, item := range w.Output {
		switch item.Type {
		case "message":
			var text strings.Builder
			for _, c := range item.Content {
				if c.Type == "output_text" {
					text.WriteString(c.Text)
				}
			}
			out.Content = append(out.Content, contracts.Block{Type: contracts.BlockText, Text: text.String()})
		case "reasoning":
			var parts []string
			for _, s := range item.Summary {
				parts = append(parts, s.Text)
			}
			out.Content = append(out.Content, contracts.Block{Type: contracts.BlockThinking,
				Text: strings.Join(parts, "\n"), ID: item.ID, Signature: item.Encrypted, Origin: Origin})
		case "function_call":
			args := json.RawMessage(item.Arguments)
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			if !json.Valid(args) {
				return out, errors.New("openai model: a function call's arguments are not JSON")
			}
			out.Content = append(out.Content, contracts.Block{Type: contracts.BlockToolUse, ID: item.CallID, Name: item.Name, Input: args})
			out.StopReason = contracts.StopToolUse
		}
	}
	if w.Status == "incomplete" && w.IncompleteDetails != nil && w.IncompleteDetails.Reason == "max_output_tokens" {
		out.StopReason = contracts.StopMaxTokens
	}
	return out, nil
}
