package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"

	"github.com/sms-baseline/sms/kernel"
)

// toolName is what the model accepts as a tool name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// parseTool reads a ToolPoint item: a Tool, or the JSON shape whose handler
// is an agent plugin's function (a kernel.Func).
func parseTool(item any) (Tool, error) {
	var t Tool
	switch it := item.(type) {
	case Tool:
		t = it
	case map[string]any:
		fn, ok := it["handler"].(kernel.Func)
		if !ok {
			return t, fmt.Errorf("a tool's handler must be a function")
		}
		name, _ := it["name"].(string)
		desc, _ := it["description"].(string)
		raw, err := json.Marshal(it["input_schema"])
		if err != nil {
			return t, fmt.Errorf("tool %q: input_schema: %w", name, err)
		}
		t = Tool{Name: name, Description: desc, InputSchema: raw, Handler: agentTool(fn)}
	default:
		return t, fmt.Errorf("a tool is {name, description, input_schema, handler}, got %T", item)
	}
	return t, checkTool(t)
}

func checkTool(t Tool) error {
	if !toolName.MatchString(t.Name) {
		return fmt.Errorf("tool name %q must be 1 to 64 letters, digits, _ or -", t.Name)
	}
	if builtin(t.Name) {
		return fmt.Errorf("tool name %q is a built-in tool", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q has no handler", t.Name)
	}
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
		return fmt.Errorf("tool %q: input_schema must be a JSON Schema object", t.Name)
	}
	if typ, ok := schema["type"]; ok && typ != "object" {
		return fmt.Errorf("tool %q: input_schema must have type object", t.Name)
	}
	return nil
}

// agentTool adapts an agent plugin's function: the input crosses as a JSON
// snapshot and a thrown error is the tool's error.
func agentTool(fn kernel.Func) ToolFunc {
	return func(ctx context.Context, input map[string]any) (any, error) { return fn(ctx, input) }
}

// parsePrompt reads a PromptPoint item: a Prompt or its JSON shape.
func parsePrompt(item any) (Prompt, error) {
	var p Prompt
	switch it := item.(type) {
	case Prompt:
		p = it
	case map[string]any:
		raw, err := json.Marshal(it)
		if err != nil {
			return p, fmt.Errorf("a prompt is {section, order, text}: %w", err)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return p, fmt.Errorf("a prompt is {section, order, text}: %w", err)
		}
	default:
		return p, fmt.Errorf("a prompt is {section, order, text}, got %T", item)
	}
	if p.Section == "" || p.Text == "" {
		return p, fmt.Errorf("a prompt needs a section and a text")
	}
	return p, nil
}

// checkInput checks a tool's input against its schema: the input must be
// an object, required properties present, and declared properties of their
// primitive type. It returns the decoded input.
func checkInput(schemaRaw, inputRaw json.RawMessage) (map[string]any, error) {
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schemaRaw, &schema); err != nil {
		return nil, fmt.Errorf("the tool's input_schema is not valid: %w", err)
	}
	var input map[string]any
	if err := json.Unmarshal(inputRaw, &input); err != nil || input == nil {
		return nil, fmt.Errorf("the input must be a JSON object")
	}
	for _, name := range schema.Required {
		if _, ok := input[name]; !ok {
			return nil, fmt.Errorf("the input lacks required property %q", name)
		}
	}
	for name, prop := range schema.Properties {
		v, ok := input[name]
		if !ok {
			continue
		}
		if !typeMatches(prop.Type, v) {
			return nil, fmt.Errorf("property %q must be of type %v, got %s", name, prop.Type, typeOf(v))
		}
	}
	return input, nil
}

// typeMatches reports whether v has the schema type want: a name, a list
// of names, or nothing (any value).
func typeMatches(want, v any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case string:
		return w == typeOf(v) || (w == "number" && typeOf(v) == "integer")
	case []any:
		for _, x := range w {
			if typeMatches(x, v) {
				return true
			}
		}
		return false
	}
	return true // a schema this check does not understand constrains nothing here
}

// typeOf names the JSON Schema type of a decoded JSON value.
func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
