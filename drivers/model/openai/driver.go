package openai

import "github.com/sms-baseline/sms/contracts"

// Driver describes the OpenAI provider to a driver registry: it needs a
// model name and a key, read from OPENAI_API_KEY when no key file is
// given.
var Driver = contracts.ModelDriver{
	DriverInfo: contracts.DriverInfo{Name: "openai", Help: "the Responses API"},
	Needs:      []contracts.ModelNeed{{Setting: contracts.ModelName}},
	KeyEnv:     []string{"OPENAI_API_KEY"},
	Efforts:    Efforts,
	Open: func(s contracts.ModelSettings) (contracts.ModelService, error) {
		return New(Options{APIKey: s.Key, BaseURL: s.BaseURL, Model: s.Name, Effort: s.Effort})
	},
}
