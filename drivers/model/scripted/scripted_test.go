package scripted_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/modeltest"
	"github.com/sms-baseline/sms/drivers/model/scripted"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(_ *testing.T, turns [][]contracts.Block) contracts.ModelService {
		return scripted.New(turns)
	})
}

// A script file is read strictly, and a bad one is refused naming the turn
// and block. Seen failing with checkBlock returning nil.
func TestParse(t *testing.T) {
	m, err := scripted.Parse([]byte(`[[{"type":"text","text":"hi"}],[{"type":"tool_use","name":"t","input":{"a":1}}]]`))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := m.Complete(context.Background(), contracts.ModelRequest{})
	second, _ := m.Complete(context.Background(), contracts.ModelRequest{})
	if first.Content[0].Text != "hi" || second.StopReason != contracts.StopToolUse || second.Content[0].ID == "" {
		t.Fatalf("turns = %+v, %+v", first, second)
	}
	_, err = m.Complete(context.Background(), contracts.ModelRequest{})
	if err == nil || !strings.Contains(err.Error(), "no turn 3 (it has 2)") {
		t.Fatalf("third call = %v, want an error saying the script ran out", err)
	}
	bad := []struct{ script, want string }{
		{`{"type":"text"}`, "JSON array of turns"},
		{`[[{"type":"image"}]]`, "turn 1, block 1"},
		{`[[{"type":"text","text":"a"}],[{"type":"tool_use"}]]`, "turn 2, block 1: a tool_use block needs a name"},
		{`[[{"type":"tool_use","name":"t","input":[1]}]]`, "must be a JSON object"},
		{`[[{"type":"text","txt":"a"}]]`, "unknown field"},
	}
	for _, tc := range bad {
		if _, err := scripted.Parse([]byte(tc.script)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", tc.script, err, tc.want)
		}
	}
}
