package agentloop

import (
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli/clitest"
	"github.com/sms-baseline/sms/drivers/model/claudecli"
	"github.com/sms-baseline/sms/drivers/model/codexcli"
)

// The real claude and codex CLIs, against fakes of their providers'
// APIs, drive the agent: a first chat defines a plugin through the judge
// (the CLI calls plugin_define over MCP), a second calls the tool the
// plugin contributed (the CLI's next turn lists it). Seen failing with
// the tool server answering calls without passing them to the sink.
func TestAgentCLIsDefineAndCallATool(t *testing.T) {
	turns := [][]contracts.Block{
		defineDoubler(),
		text("Defined."),
		{toolUse("double", map[string]any{"n": 21})},
		text("21 doubled is 42"),
	}
	for _, cli := range []struct {
		name string
		open func(t *testing.T) contracts.ModelService
	}{
		{"claude", func(t *testing.T) contracts.ModelService {
			fake := clitest.NewAnthropic(t, turns)
			m, err := claudecli.New(claudecli.Options{Command: clitest.CLI(t, "SMS_CLAUDE_CLI"), Model: "claude-test", BaseURL: fake.URL,
				Env: []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-fake"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			return m
		}},
		{"codex", func(t *testing.T) contracts.ModelService {
			fake := clitest.NewResponses(t, turns)
			home := t.TempDir()
			m, err := codexcli.New(codexcli.Options{Command: clitest.CLI(t, "SMS_CODEX_CLI"), Model: "gpt-test", BaseURL: fake.URL + "/v1",
				Env: []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-fake"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			return m
		}},
	} {
		t.Run(cli.name, func(t *testing.T) {
			env := baselinetest.New(t, baselinetest.Options{Approvals: true, Model: cli.open(t)})
			r := chat(t, env, "s1", "make me a doubler")
			if r.Reply != "Defined." || len(r.Steps) != 1 || !strings.Contains(r.Steps[0].Result, `"status":"mounted"`) {
				t.Fatalf("first chat = %+v, want plugin_define mounted, then the answer", r)
			}
			if got := fiberState(t, env, "agent.doubler"); got != "active" {
				t.Fatalf("agent.doubler state = %q, want active", got)
			}
			r = chat(t, env, "s1", "double 21")
			if r.Reply != "21 doubled is 42" || len(r.Steps) != 1 || r.Steps[0].Tool != "double" || !strings.Contains(r.Steps[0].Result, "42") {
				t.Fatalf("second chat = %+v, want the double tool's 42, then the answer", r)
			}
		})
	}
}
