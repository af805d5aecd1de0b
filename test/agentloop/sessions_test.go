package agentloop

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/plugins/agentloop"
)

// A session's transcript survives a restart: the first turn after it sends
// the model the earlier messages too. Seen failing with turn() skipping
// load, and with baseline not giving the loop DatabaseSessions.
func TestSessionsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kernel.db")
	chat := func(m contracts.ModelService, text string) {
		st, err := sqlite.OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := baseline.New(ctx, baseline.Options{Store: st, Model: m})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = b.Close() }()
		v, err := b.Kernel.GetValue(agentloop.Key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.(agentloop.Service).Chat(ctx, "s", text); err != nil {
			t.Fatal(err)
		}
	}
	chat(record(text("first answer")), "hello")
	second := record(text("second answer"))
	chat(second, "again")
	msgs := second.requests()[0].Messages
	if len(msgs) != 3 || msgs[0].Content[0].Text != "hello" || msgs[1].Content[0].Text != "first answer" {
		t.Fatalf("messages after the restart = %+v, want hello, first answer, again", msgs)
	}
}
