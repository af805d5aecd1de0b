package gptoauth

import (
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/openai"
)

// Driver describes gpt-oauth to a driver registry: single-user, opened
// only when the unofficial switch is on; --model-key-file names
// auth.json (default DefaultAuthFile), the base URL replaces the backend.
var Driver = contracts.ModelDriver{
	DriverInfo: contracts.DriverInfo{Name: "gpt-oauth",
		Help: "UNOFFICIAL: ChatGPT's Codex backend on codex login's tokens, for your own kernel only; needs --allow-unofficial-gpt-oauth"},
	Needs:      []contracts.ModelNeed{{Setting: contracts.ModelName}},
	Efforts:    openai.Efforts,
	SingleUser: true,
	Open: func(s contracts.ModelSettings) (contracts.ModelService, error) {
		return New(Options{Unofficial: s.AllowUnofficial, AuthFile: s.KeyFile, Model: s.Name, Effort: s.Effort, BaseURL: s.BaseURL})
	},
}
