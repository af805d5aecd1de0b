package anthropic

import "github.com/sms-baseline/sms/contracts"

// Driver describes the Anthropic provider to a driver registry: it needs a
// model name and a key, read from ANTHROPIC_API_KEY when no key file is
// given.
var Driver = contracts.ModelDriver{
	DriverInfo:     contracts.DriverInfo{Name: "anthropic", Help: "the Messages API"},
	Needs:          []contracts.ModelNeed{{Setting: contracts.ModelName}},
	KeyEnv:         []string{"ANTHROPIC_API_KEY"},
	Efforts:        Efforts,
	ThinkingBudget: true,
	Open: func(s contracts.ModelSettings) (contracts.ModelService, error) {
		return New(Options{APIKey: s.Key, BaseURL: s.BaseURL, Model: s.Name, Effort: s.Effort, ThinkingBudget: s.ThinkingBudget})
	},
}
