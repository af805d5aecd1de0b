package kernelcmd

import (
	"os"
	"strings"
	"testing"
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
