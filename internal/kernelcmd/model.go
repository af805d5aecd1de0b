package kernelcmd

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

// keyEnv lists, per provider, the environment variables a key is read
// from when Model.KeyFile (--model-key-file) is not given, in order.
var keyEnv = map[string][]string{
	"anthropic":    {"ANTHROPIC_API_KEY"},
	"openai":       {"OPENAI_API_KEY"},
	"openaicompat": {"OPENROUTER_API_KEY", "OPENAI_API_KEY"},
}

// newModel returns the chat agent's model, or nil for none.
func newModel(m Model) (contracts.ModelService, error) {
	if m.Provider == "" {
		if m.Script != "" || m.Name != "" || m.BaseURL != "" {
			return nil, fmt.Errorf("--model-script, --model-name and --model-base-url need --model")
		}
		return nil, nil
	}
	if m.Provider == "scripted" {
		if m.Script == "" {
			return nil, fmt.Errorf("--model scripted needs --model-script FILE")
		}
		model, err := scripted.Load(m.Script)
		if err != nil {
			return nil, fmt.Errorf("--model-script: %w", err)
		}
		return model, nil
	}
	if _, ok := keyEnv[m.Provider]; !ok {
		return nil, fmt.Errorf("--model %q: want scripted, anthropic, openai or openaicompat", m.Provider)
	}
	if m.Name == "" {
		return nil, fmt.Errorf("--model %s needs --model-name", m.Provider)
	}
	key, err := modelKey(m)
	if err != nil {
		return nil, err
	}
	switch m.Provider {
	case "anthropic":
		return anthropic.New(anthropic.Options{APIKey: key, BaseURL: m.BaseURL, Model: m.Name})
	case "openai":
		return openai.New(openai.Options{APIKey: key, BaseURL: m.BaseURL, Model: m.Name})
	default:
		if m.BaseURL == "" {
			return nil, fmt.Errorf("--model openaicompat needs --model-base-url (OpenRouter, or a local server such as Ollama or vLLM)")
		}
		return openaicompat.New(openaicompat.Options{APIKey: key, BaseURL: m.BaseURL, Model: m.Name})
	}
}

// modelKey reads the key from --model-key-file or the provider's variables.
// A local OpenAI-compatible server needs none; it gets a placeholder.
func modelKey(m Model) (string, error) {
	if m.KeyFile != "" {
		raw, err := os.ReadFile(m.KeyFile)
		if err != nil {
			return "", fmt.Errorf("--model-key-file: read model key: %w", err)
		}
		if key := strings.TrimSpace(string(raw)); key != "" {
			return key, nil
		}
		return "", fmt.Errorf("--model-key-file: read model key: %s is empty", m.KeyFile)
	}
	for _, name := range keyEnv[m.Provider] {
		if key := os.Getenv(name); key != "" {
			return key, nil
		}
	}
	if m.Provider == "openaicompat" {
		return "none", nil
	}
	return "", fmt.Errorf("--model %s needs a key: set %s or pass --model-key-file", m.Provider, strings.Join(keyEnv[m.Provider], " or "))
}
