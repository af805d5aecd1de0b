package kernelcmd

import (
	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	gojaexec "github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/drivers/model/anthropic"
	"github.com/sms-baseline/sms/drivers/model/claudecli"
	"github.com/sms-baseline/sms/drivers/model/codexcli"
	"github.com/sms-baseline/sms/drivers/model/gptoauth"
	"github.com/sms-baseline/sms/drivers/model/openai"
	"github.com/sms-baseline/sms/drivers/model/openaicompat"
	"github.com/sms-baseline/sms/drivers/model/scripted"
)

// The drivers `manager kernel` can build, in the order its help and its
// errors list them: the order of the Tenant API's enums (api/v1), whose
// values are exactly these names. Each driver package describes itself
// (name, help, needs, keys, constructor) in its Driver value; this file
// is the one place that links them into the command.
var (
	// Models are the chat agent's model providers (--model).
	Models = contracts.MustRegistry("model", scripted.Driver, anthropic.Driver, openai.Driver, openaicompat.Driver,
		claudecli.Driver, codexcli.Driver, gptoauth.Driver)
	// Executors are where agent code runs (--executor); the first is
	// the default.
	Executors = contracts.MustRegistry("executor", isolated.Driver, gojaexec.Driver)
	// Stores are the stores --store opens, by its scheme.
	Stores = baseline.Stores
)

// modelFlags names the flag that holds each model setting, as errors
// write it.
var modelFlags = map[contracts.ModelSetting]string{
	contracts.ModelName:           "--model-name",
	contracts.ModelBaseURL:        "--model-base-url",
	contracts.ModelScript:         "--model-script",
	contracts.ModelEffort:         "--model-effort",
	contracts.ModelThinkingBudget: "--model-thinking-budget",
}

// TenantModels lists the models a Tenant may name: every model but the
// single-user ones (gpt-oauth), which spend one person's own login.
func TenantModels() []string {
	var names []string
	for _, d := range Models.All() {
		if !d.SingleUser {
			names = append(names, d.Name)
		}
	}
	return names
}

// ModelKeyEnv lists the variables any model reads its key from, each
// once, in the order of Models.
func ModelKeyEnv() []string {
	var names []string
	seen := map[string]bool{}
	for _, d := range Models.All() {
		for _, name := range d.KeyEnv {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}
