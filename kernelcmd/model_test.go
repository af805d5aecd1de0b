package kernelcmd

import (
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
)

// --model takes scripted with a script file and refuses anything else.
// Seen failing with newModel returning nil for an unknown provider, and
// with modelKey ignoring the environment.
func TestNewModel(t *testing.T) {
	dir := t.TempDir()
	script, keyFile, emptyKey := dir+"/turns.json", dir+"/key", dir+"/empty"
	for path, text := range map[string]string{script: `[[{"type":"text","text":"hi"}]]`, keyFile: "k\n", emptyKey: " \n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, env := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"} {
		t.Setenv(env, "")
	}
	good := []Model{
		{Provider: "scripted", Script: script},
		{Provider: "anthropic", Name: "m", KeyFile: keyFile},
		{Provider: "openai", Name: "m", KeyFile: keyFile},
		{Provider: "openaicompat", Name: "m", BaseURL: "http://127.0.0.1:11434/v1"}, // a local server needs no key
		{Provider: "anthropic", Name: "m", KeyFile: keyFile, Effort: "max", ThinkingBudget: 2048},
		{Provider: "openaicompat", Name: "m", BaseURL: "http://127.0.0.1:1/v1", Effort: "xhigh", AppName: "a", SiteURL: "https://a"},
	}
	for _, m := range good {
		if got, err := newModel(m); err != nil || got == nil {
			t.Fatalf("newModel(%+v) = %v, %v; want a model", m, got, err)
		}
	}
	bad := []struct {
		m    Model
		want string
	}{
		{Model{Provider: "scripted"}, "needs --model-script"},
		{Model{Provider: "scripted", Script: dir + "/missing.json"}, "--model-script: "},
		{Model{Provider: "other"}, "want scripted, anthropic"},
		{Model{Script: script}, "need --model"},
		{Model{Provider: "anthropic", Name: "m"}, "set ANTHROPIC_API_KEY"},
		{Model{Provider: "openai"}, "needs --model-name"},
		{Model{Provider: "openaicompat", Name: "m"}, "needs --model-base-url"},
		{Model{Provider: "anthropic", Name: "m", KeyFile: dir + "/missing"}, "--model-key-file: read model key"},
		{Model{Provider: "openai", Name: "m", KeyFile: emptyKey}, "is empty"},
		{Model{Provider: "scripted", Script: script, Effort: "high"}, "--model-effort: --model scripted takes no effort"},
		{Model{Provider: "openai", Name: "m", KeyFile: keyFile, Effort: "huge"}, `--model-effort "huge": --model openai takes none, minimal`},
		{Model{Provider: "openai", Name: "m", KeyFile: keyFile, ThinkingBudget: 4000}, "--model-thinking-budget: --model openai has no thinking budget"},
		{Model{Provider: "anthropic", Name: "m", KeyFile: keyFile, ThinkingBudget: 100}, "--model-thinking-budget: anthropic takes at least 1024"},
		{Model{Provider: "openaicompat", Name: "m", BaseURL: "http://x", Effort: "low", ThinkingBudget: 4000}, "--model-thinking-budget: openaicompat takes an effort or a thinking budget"},
		{Model{Effort: "low"}, "need --model"},
	}
	for _, tc := range bad {
		if _, err := newModel(tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("newModel(%+v) = %v, want an error containing %q", tc.m, err, tc.want)
		}
	}
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	if _, err := newModel(Model{Provider: "anthropic", Name: "m"}); err != nil {
		t.Fatalf("a key from ANTHROPIC_API_KEY was not used: %v", err)
	}
	if m, err := newModel(Model{}); err != nil || m != nil {
		t.Fatalf("no model = %v, %v; want nil, nil", m, err)
	}
}

// The kernel command closes a model that has processes to stop (a CLI
// model) when the kernel closes, and passes nothing for one that has
// none. Seen failing with closeModel returning nil for every model.
func TestCloseModel(t *testing.T) {
	withProcesses := contracts.NewSessionModel(nil, contracts.SessionOptions{})
	if closeModel(withProcesses) == nil {
		t.Fatal("closeModel(a SessionModel) = nil, want its Close")
	}
	if closeModel(scripted.New(nil)) != nil {
		t.Fatal("closeModel(a scripted model) is not nil")
	}
}
