package kernelcmd

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// newModel returns the chat agent's model, or nil for none. The provider
// is looked up in Models; its driver says which settings it needs and
// where its key comes from.
func newModel(m Model) (contracts.ModelService, error) {
	if m.Provider == "" {
		if m.Script != "" || m.Name != "" || m.BaseURL != "" || m.Effort != "" || m.ThinkingBudget != 0 {
			return nil, fmt.Errorf("--model-script, --model-name, --model-base-url, --model-effort and --model-thinking-budget need --model")
		}
		return nil, nil
	}
	d, err := Models.Lookup(m.Provider)
	if err != nil {
		return nil, fmt.Errorf("--model %q: want %s", m.Provider, Models.Choices())
	}
	if err := checkReasoning(m, d); err != nil {
		return nil, err
	}
	s := contracts.ModelSettings{Name: m.Name, BaseURL: m.BaseURL, Script: m.Script, Effort: m.Effort,
		ThinkingBudget: m.ThinkingBudget, AppName: m.AppName, SiteURL: m.SiteURL, KeyFile: m.KeyFile, AllowUnofficial: m.AllowUnofficial}
	for _, need := range d.Needs {
		if setting(s, need.Setting) == "" {
			return nil, fmt.Errorf("--model %s needs %s", m.Provider, strings.TrimSpace(modelFlags[need.Setting]+" "+need.Hint))
		}
	}
	if s.Key, err = modelKey(m, d); err != nil {
		return nil, err
	}
	model, err := d.Open(s)
	if se := (*contracts.SettingError)(nil); errors.As(err, &se) {
		return nil, fmt.Errorf("%s: %w", modelFlags[se.Setting], se.Err)
	}
	return model, err
}

// closeModel returns what stops a model's processes (a CLI model's
// running turns) when the kernel closes, or nil.
func closeModel(m contracts.ModelService) func() error {
	c, ok := m.(interface{ Close() })
	if !ok {
		return nil
	}
	return func() error { c.Close(); return nil }
}

// checkReasoning refuses an effort or a thinking budget the driver does
// not take.
func checkReasoning(m Model, d contracts.ModelDriver) error {
	switch {
	case m.Effort != "" && len(d.Efforts) == 0:
		return fmt.Errorf("--model-effort: --model %s takes no effort", d.Name)
	case m.Effort != "" && !slices.Contains(d.Efforts, m.Effort):
		return fmt.Errorf("--model-effort %q: --model %s takes %s", m.Effort, d.Name, contracts.OrList(d.Efforts))
	case m.ThinkingBudget < 0:
		return fmt.Errorf("--model-thinking-budget %d: want a positive number of tokens", m.ThinkingBudget)
	case m.ThinkingBudget > 0 && !d.ThinkingBudget:
		return fmt.Errorf("--model-thinking-budget: --model %s has no thinking budget; use --model-effort", d.Name)
	}
	return nil
}

// setting returns the value of one setting of s.
func setting(s contracts.ModelSettings, name contracts.ModelSetting) string {
	switch name {
	case contracts.ModelName:
		return s.Name
	case contracts.ModelBaseURL:
		return s.BaseURL
	case contracts.ModelScript:
		return s.Script
	}
	return ""
}

// modelKey reads the key from --model-key-file or the driver's variables.
// A driver without variables takes no key; one whose key is optional gets
// an empty one when none is set.
func modelKey(m Model, d contracts.ModelDriver) (string, error) {
	if len(d.KeyEnv) == 0 {
		return "", nil
	}
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
	for _, name := range d.KeyEnv {
		if key := os.Getenv(name); key != "" {
			return key, nil
		}
	}
	if d.KeyOptional {
		return "", nil
	}
	return "", fmt.Errorf("--model %s needs a key: set %s or pass --model-key-file", m.Provider, strings.Join(d.KeyEnv, " or "))
}
