package claudecli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli/clitest"
	"github.com/sms-baseline/sms/drivers/model/claudecli"
	"github.com/sms-baseline/sms/drivers/model/modeltest"
)

// open returns a model running the real claude CLI against fake, in a
// home of its own with a key for the fake.
func open(t *testing.T, fake *clitest.Fake) *contracts.SessionModel {
	t.Helper()
	m, err := claudecli.New(claudecli.Options{
		Command: clitest.CLI(t, "SMS_CLAUDE_CLI"),
		Model:   "claude-test",
		BaseURL: fake.URL,
		Env:     []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-fake"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func TestContract(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, turns [][]contracts.Block) contracts.ModelService {
		return open(t, clitest.NewAnthropic(t, turns))
	})
}

var tools = []contracts.Tool{{Name: "overdue", Description: "unpaid invoices", InputSchema: json.RawMessage(`{"type":"object"}`)}}

func say(text string) []contracts.Block {
	return []contracts.Block{{Type: contracts.BlockText, Text: text}}
}

func user(text string) contracts.Message {
	return contracts.Message{Role: contracts.RoleUser, Content: say(text)}
}

// The second turn of a conversation resumes the CLI's session: the CLI
// sends the provider the first turn too. The CLI is offered the kernel's
// tools only, and gets the system prompt. Seen failing with args leaving
// out --resume, and with --tools "" removed (the CLI offered its own).
func TestResumesTheSessionWithTheKernelsToolsOnly(t *testing.T) {
	fake := clitest.NewAnthropic(t, [][]contracts.Block{say("One."), say("Two.")})
	m := open(t, fake)
	ctx := contracts.WithConversation(context.Background(), "c1")
	msgs := []contracts.Message{user("first question")}
	resp, err := m.Complete(ctx, contracts.ModelRequest{System: "You are a test.", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, contracts.Message{Role: contracts.RoleAssistant, Content: resp.Content}, user("second question"))
	if _, err := m.Complete(ctx, contracts.ModelRequest{System: "You are a test.", Messages: msgs, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake saw %d requests of the loop, want 2", len(reqs))
	}
	var second struct {
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[1], &second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(second.Messages), "first question") || !strings.Contains(string(second.Messages), "One.") {
		t.Errorf("the second turn's request does not carry the first turn: %s", second.Messages)
	}
	if strings.Contains(string(second.Messages), "The conversation so far") {
		t.Errorf("the second turn started a new session: %s", second.Messages)
	}
	if !strings.Contains(string(second.System), "You are a test.") {
		t.Errorf("the system prompt is not sent: %s", second.System)
	}
	offered := map[string]bool{}
	for _, tool := range second.Tools {
		offered[tool.Name] = true
	}
	for _, own := range []string{"Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch", "Task", "Agent"} {
		if offered[own] {
			t.Errorf("the CLI offered its own tool %s: %+v", own, second.Tools)
		}
	}
	if !offered["mcp__sms__overdue"] {
		t.Errorf("the CLI did not offer the kernel's overdue: %+v", second.Tools)
	}
}

// A CLI whose login the provider refuses fails the turn with an error
// naming `claude login`; a missing CLI names how to install it. Seen
// failing with explain returning the bare error.
func TestLoginAndInstallErrors(t *testing.T) {
	fake := clitest.NewAnthropic(t, nil)
	fake.Refuse(http.StatusUnauthorized)
	_, err := open(t, fake).Complete(context.Background(), contracts.ModelRequest{Messages: []contracts.Message{user("hi")}, Tools: tools})
	if err == nil || !strings.Contains(err.Error(), "claude login") {
		t.Fatalf("a refused login = %v, want an error naming `claude login`", err)
	}
	_, err = claudecli.New(claudecli.Options{Command: filepath.Join(t.TempDir(), "claude")})
	if err == nil || !strings.Contains(err.Error(), claudecli.Install) {
		t.Fatalf("a missing CLI = %v, want an error naming %q", err, claudecli.Install)
	}
}

// TestLiveClaudeCLI runs a tool round trip on the claude CLI's own login
// when SMS_LIVE_MODELS=1 (after `claude login`).
func TestLiveClaudeCLI(t *testing.T) {
	if os.Getenv("SMS_LIVE_MODELS") != "1" {
		t.Skip("set SMS_LIVE_MODELS=1 to run the claude CLI on your login")
	}
	m, err := claudecli.New(claudecli.Options{Command: os.Getenv("SMS_CLAUDE_CLI")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	modeltest.Live(t, m)
}
