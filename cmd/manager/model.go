package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/anthropic"
	"github.com/sms-baseline/sms/drivers/model/openai"
	"github.com/sms-baseline/sms/drivers/model/openaicompat"
	"github.com/sms-baseline/sms/drivers/model/scripted"
)

// modelFlags choose the chat agent's model.
type modelFlags struct {
	provider, name, baseURL, script, keyFile string
}

// keyEnv lists, per provider, the environment variables a key is read
// from when --model-key-file is not given, in order.
var keyEnv = map[string][]string{
	"anthropic":    {"ANTHROPIC_API_KEY"},
	"openai":       {"OPENAI_API_KEY"},
	"openaicompat": {"OPENROUTER_API_KEY", "OPENAI_API_KEY"},
}

// newModel returns the chat agent's model, or nil for none.
func newModel(f modelFlags) (contracts.ModelService, error) {
	if f.provider == "" {
		if f.script != "" || f.name != "" || f.baseURL != "" {
			return nil, fmt.Errorf("--model-script, --model-name and --model-base-url need --model")
		}
		return nil, nil
	}
	if f.provider == "scripted" {
		if f.script == "" {
			return nil, fmt.Errorf("--model scripted needs --model-script FILE")
		}
		return scripted.Load(f.script)
	}
	if _, ok := keyEnv[f.provider]; !ok {
		return nil, fmt.Errorf("--model %q: want scripted, anthropic, openai or openaicompat", f.provider)
	}
	if f.name == "" {
		return nil, fmt.Errorf("--model %s needs --model-name", f.provider)
	}
	key, err := modelKey(f)
	if err != nil {
		return nil, err
	}
	switch f.provider {
	case "anthropic":
		return anthropic.New(anthropic.Options{APIKey: key, BaseURL: f.baseURL, Model: f.name})
	case "openai":
		return openai.New(openai.Options{APIKey: key, BaseURL: f.baseURL, Model: f.name})
	default:
		if f.baseURL == "" {
			return nil, fmt.Errorf("--model openaicompat needs --model-base-url (OpenRouter, or a local server such as Ollama or vLLM)")
		}
		return openaicompat.New(openaicompat.Options{APIKey: key, BaseURL: f.baseURL, Model: f.name})
	}
}

// modelKey reads the key from --model-key-file or the provider's variables.
// A local OpenAI-compatible server needs none; it gets a placeholder.
func modelKey(f modelFlags) (string, error) {
	if f.keyFile != "" {
		raw, err := os.ReadFile(f.keyFile)
		if err != nil {
			return "", fmt.Errorf("read model key: %w", err)
		}
		if key := strings.TrimSpace(string(raw)); key != "" {
			return key, nil
		}
		return "", fmt.Errorf("read model key: %s is empty", f.keyFile)
	}
	for _, name := range keyEnv[f.provider] {
		if key := os.Getenv(name); key != "" {
			return key, nil
		}
	}
	if f.provider == "openaicompat" {
		return "none", nil
	}
	return "", fmt.Errorf("--model %s needs a key: set %s or pass --model-key-file", f.provider, strings.Join(keyEnv[f.provider], " or "))
}
