package codexcli

import "github.com/sms-baseline/sms/contracts"

// Driver describes the codex CLI to a driver registry: it takes no key
// (the CLI uses its own login); a model name and a base URL are optional.
var Driver = contracts.ModelDriver{
	DriverInfo: contracts.DriverInfo{Name: "codex-cli", Help: "the codex CLI on its own login (codex login), no API key"},
	Efforts:    Efforts,
	Open: func(s contracts.ModelSettings) (contracts.ModelService, error) {
		return New(Options{Model: s.Name, BaseURL: s.BaseURL, Effort: s.Effort})
	},
}
