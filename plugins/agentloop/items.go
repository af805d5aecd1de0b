package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/santhosh-tekuri/jsonschema/v6"

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

// checkInput checks a tool's input against its input_schema (JSON Schema,
// any draft the schema names, 2020-12 by default): the input must be an
// object that validates. The schema may not load anything: references to
// other documents are refused, so agent-supplied schemas cannot read files.
// It returns the decoded input.
func checkInput(schemaRaw, inputRaw json.RawMessage) (map[string]any, error) {
	var input map[string]any
	if err := json.Unmarshal(inputRaw, &input); err != nil || input == nil {
		return nil, fmt.Errorf("the input must be a JSON object")
	}
	sch, err := compileSchema(schemaRaw)
	if err != nil {
		return nil, fmt.Errorf("the tool's input_schema is not valid: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(inputRaw))
	if err != nil {
		return nil, fmt.Errorf("the input must be a JSON object: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		return nil, fmt.Errorf("the input does not match the tool's input_schema: %w", err)
	}
	return input, nil
}

// compileSchema compiles a tool's schema with no loader at all.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "urn:sms:tool-input"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}
