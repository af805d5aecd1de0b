package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// RestoreEvents is how many events BenchRestore restores from.
const RestoreEvents = 10000

// restoreAgents is how many agent plugins the restored log installs.
const restoreAgents = 20

// BenchAppend measures appending one small event to st's log.
func BenchAppend(b *testing.B, st contracts.Store) {
	ctx := context.Background()
	e := kernel.Event{Type: kernel.EventFiberActivated, Plugin: "agent.bench", Time: t0,
		Data: json.RawMessage(`{"note":"benchmark"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Log().Append(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchRestore fills st (new and empty) with RestoreEvents events, then
// measures a new kernel with two system plugins restoring from it: reading
// and folding the log, fetching the code of restoreAgents agent plugins and
// activating them. The audit events a restore appends (fiber/activated) are
// dropped, so every iteration restores the same log; BenchAppend measures
// appends.
func BenchRestore(b *testing.B, st contracts.Store) {
	fillLog(b, st)
	exec := restartExecutor()
	log := auditDropper{st.Log()}
	b.ReportAllocs()
	for b.Loop() {
		k := bootKernel(b, log, st.Blobs(), exec)
		if n := len(k.Contributions("tool")); n != restoreAgents {
			b.Fatalf("restored %d contributions, want %d", n, restoreAgents)
		}
	}
}

// fillLog writes RestoreEvents events the way a kernel's life does: plugin
// installs through a kernel, then chat audit events with a plugin disabled
// and enabled again every 50 events, ending with every plugin enabled.
func fillLog(b *testing.B, st contracts.Store) {
	b.Helper()
	ctx := context.Background()
	k := bootKernel(b, st.Log(), st.Blobs(), restartExecutor())
	for i := range restoreAgents {
		m := kernel.Manifest{ID: fmt.Sprintf("agent.p%02d", i), Version: "1", Inject: []string{"db"}, Points: []string{"tool"}}
		if err := kerneltest.Agent(ctx, k, m, "tool"); err != nil {
			b.Fatal(err)
		}
	}
	events, err := st.Log().Read(ctx, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	seq := int64(len(events))
	chat := json.RawMessage(`{"session":"s1","text":"` + strings.Repeat("lorem ipsum ", 16) + `"}`)
	toggled := ""
	for seq < RestoreEvents {
		e := kernel.Event{Type: "chat/message", Time: t0, Data: chat}
		switch {
		case toggled != "":
			e = kernel.Event{Type: kernel.EventPluginEnabled, Plugin: toggled, Time: t0}
			toggled = ""
		case (seq+1)%50 == 0 && seq+2 <= RestoreEvents:
			toggled = fmt.Sprintf("agent.p%02d", seq/50%restoreAgents)
			e = kernel.Event{Type: kernel.EventPluginDisabled, Plugin: toggled, Time: t0}
		}
		if seq, err = st.Log().Append(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// auditDropper drops fiber/* audit appends and passes everything else.
type auditDropper struct{ kernel.EventLog }

func (l auditDropper) Append(ctx context.Context, e kernel.Event) (int64, error) {
	if strings.HasPrefix(e.Type, "fiber/") {
		return 0, nil
	}
	return l.EventLog.Append(ctx, e)
}
