package openaicompat

import "github.com/sms-baseline/sms/contracts"

// NoKey is the key sent when none is configured: a local server (Ollama,
// vLLM) wants none, and the client sends a placeholder.
const NoKey = "none"

// Driver describes the Chat Completions provider to a driver registry: it
// needs a model name and a base URL; its key, read from OPENROUTER_API_KEY
// or OPENAI_API_KEY when no key file is given, is optional.
var Driver = contracts.ModelDriver{
	DriverInfo: contracts.DriverInfo{Name: "openaicompat", Help: "Chat Completions: OpenRouter, Ollama, vLLM"},
	Needs: []contracts.ModelNeed{
		{Setting: contracts.ModelName},
		{Setting: contracts.ModelBaseURL, Hint: "(OpenRouter, or a local server such as Ollama or vLLM)"},
	},
	KeyEnv:         []string{"OPENROUTER_API_KEY", "OPENAI_API_KEY"},
	KeyOptional:    true,
	Efforts:        Efforts,
	ThinkingBudget: true,
	Open: func(s contracts.ModelSettings) (contracts.ModelService, error) {
		if s.Key == "" {
			s.Key = NoKey
		}
		return New(Options{APIKey: s.Key, BaseURL: s.BaseURL, Model: s.Name, Effort: s.Effort,
			ThinkingBudget: s.ThinkingBudget, AppName: s.AppName, SiteURL: s.SiteURL})
	},
}
