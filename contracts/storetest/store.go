package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// A Location is one place a store's data lives: a SQLite file, a Postgres
// schema. Every call opens a new Store on the same data, as a restarted
// process would; the kit closes each store it opens.
type Location func(t *testing.T) contracts.Store

// RunStore runs the Store conformance tests. newLocation must prepare a new,
// empty location on every call.
func RunStore(t *testing.T, newLocation func(t *testing.T) Location) {
	tests := []struct {
		name string
		run  func(t *testing.T, loc Location)
	}{
		{"AppendRead", testAppendRead},
		{"Paging", testPaging},
		{"PluginHistory", testPluginHistory},
		{"ConcurrentAppend", testConcurrentAppend},
		{"InvalidData", testInvalidData},
		{"AppendCancelled", testAppendCancelled},
		{"Blobs", testBlobs},
		{"Reopen", testReopen},
		{"Database", testStoreDatabase},
		{"KernelRestart", testKernelRestart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newLocation(t)) })
	}
}

// open opens a store at loc and closes it when the test ends.
func open(t *testing.T, loc Location) contracts.Store {
	t.Helper()
	st := loc(t)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

// sampleEvents covers no data, data, a plugin and none, and a time given in
// another zone.
func sampleEvents() []kernel.Event {
	cet := time.FixedZone("CET", 3600)
	return []kernel.Event{
		{Type: kernel.EventPluginInstalled, Plugin: "agent.a", Time: t0, Data: json.RawMessage(`{"manifest":{"id":"agent.a"}}`)},
		{Type: kernel.EventPluginEnabled, Plugin: "agent.a", Time: t0.Add(time.Nanosecond)},
		{Type: "chat/message", Time: t0.In(cet), Data: json.RawMessage(`{"text":"héllo \"?\" \u2028"}`)},
		{Type: kernel.EventPluginDisabled, Plugin: "agent.a", Time: t0.Add(time.Hour)},
		{Type: "judge/verdict", Plugin: "agent.b", Time: time.Time{}, Data: json.RawMessage(`[1,2.5,null,true]`)},
	}
}

func appendAll(t *testing.T, log kernel.EventLog, events []kernel.Event) {
	t.Helper()
	for i, e := range events {
		seq, err := log.Append(context.Background(), e)
		if err != nil {
			t.Fatalf("Append #%d: %v", i+1, err)
		}
		if seq != int64(i+1) {
			t.Fatalf("Append #%d returned seq %d, want %d", i+1, seq, i+1)
		}
	}
}

// checkEvents compares read events with the appended ones, which were
// numbered from first.
func checkEvents(t *testing.T, got, want []kernel.Event, first int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != first+int64(i) || g.Type != w.Type || g.Plugin != w.Plugin || !g.Time.Equal(w.Time) ||
			!bytes.Equal(g.Data, w.Data) {
			t.Errorf("event %d = seq %d %s %q at %s data %s; want seq %d %s %q at %s data %s", i,
				g.Seq, g.Type, g.Plugin, g.Time, g.Data, first+int64(i), w.Type, w.Plugin, w.Time, w.Data)
		}
	}
}

// Events come back in append order with every field intact. Seen failing
// with Read ordering by seq descending.
func testAppendRead(t *testing.T, loc Location) {
	st := open(t, loc)
	events := sampleEvents()
	appendAll(t, st.Log(), events)
	got, err := st.Log().Read(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got, events, 1)
}

// Read pages by after and limit. Seen failing with Read ordering by seq
// descending.
func testPaging(t *testing.T, loc Location) {
	st := open(t, loc)
	events := sampleEvents()
	appendAll(t, st.Log(), events)
	cases := []struct {
		after       int64
		limit, from int
		to          int // events[from:to] are expected
	}{
		{0, 0, 0, 5}, {-3, 0, 0, 5}, {0, 2, 0, 2}, {2, 2, 2, 4}, {3, 10, 3, 5}, {4, -1, 4, 5}, {5, 0, 5, 5}, {99, 1, 5, 5},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("after=%d,limit=%d", tc.after, tc.limit), func(t *testing.T) {
			got, err := st.Log().Read(context.Background(), tc.after, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			checkEvents(t, got, events[tc.from:tc.to], int64(tc.from)+1)
		})
	}
}

// ReadPlugin returns one plugin's events alone, paged like Read, so a
// rollback need not read the whole log. Seen failing with the query's
// plugin condition removed.
func testPluginHistory(t *testing.T, loc Location) {
	st := open(t, loc)
	events := sampleEvents()
	appendAll(t, st.Log(), events)
	r, ok := st.Log().(kernel.PluginEventReader)
	if !ok {
		t.Fatalf("the store's log %T is not a kernel.PluginEventReader: a rollback would read the whole log", st.Log())
	}
	cases := []struct {
		plugin string
		after  int64
		limit  int
		want   []int // indexes into events
	}{
		{"agent.a", 0, 0, []int{0, 1, 3}}, {"agent.a", 1, 0, []int{1, 3}}, {"agent.a", 0, 2, []int{0, 1}},
		{"agent.a", 2, 1, []int{3}}, {"agent.b", 0, 0, []int{4}}, {"agent.c", 0, 0, nil},
	}
	for _, tc := range cases {
		got, err := r.ReadPlugin(context.Background(), tc.plugin, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("ReadPlugin(%s, after %d, limit %d) = %d events, want %d", tc.plugin, tc.after, tc.limit, len(got), len(tc.want))
		}
		for i, w := range tc.want {
			checkEvents(t, got[i:i+1], events[w:w+1], int64(w)+1)
		}
	}
}

// Concurrent appends get distinct numbers 1..n with no gap, and each number
// names the event that was appended under it. Seen failing on Postgres with
// sqlstore's retry on ErrUnique removed.
func testConcurrentAppend(t *testing.T, loc Location) {
	st := open(t, loc)
	const workers, each = 8, 15
	var wg sync.WaitGroup
	var mu sync.Mutex
	bySeq := map[int64]string{}
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				data := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				seq, err := st.Log().Append(context.Background(), kernel.Event{Type: "test/concurrent", Time: t0, Data: json.RawMessage(data)})
				if err != nil {
					t.Errorf("Append from worker %d: %v", g, err)
					return
				}
				mu.Lock()
				if prev, dup := bySeq[seq]; dup {
					t.Errorf("seq %d returned for %s and %s", seq, prev, data)
				}
				bySeq[seq] = data
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got, err := st.Log().Read(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("read %d events, want %d", len(got), workers*each)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) || string(e.Data) != bySeq[e.Seq] {
			t.Fatalf("event %d: seq %d data %s, want seq %d data %s", i, e.Seq, e.Data, i+1, bySeq[int64(i+1)])
		}
	}
}

// Data that is not valid UTF-8 JSON is refused and appends nothing. Seen
// failing with the JSON check removed.
func testInvalidData(t *testing.T, loc Location) {
	st := open(t, loc)
	for _, data := range []string{`{`, `not json`, "\"\xff\""} {
		_, err := st.Log().Append(context.Background(), kernel.Event{Type: "x", Time: t0, Data: json.RawMessage(data)})
		if kernel.CodeOf(err) != kernel.CodeValidation {
			t.Errorf("Append with data %q: error = %v, want code %s", data, err, kernel.CodeValidation)
		}
	}
	if got, err := st.Log().Read(context.Background(), 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read = %d events, %v; want none", len(got), err)
	}
}

// A cancelled context appends nothing. Seen failing with Append handing
// context.Background() to the database.
func testAppendCancelled(t *testing.T, loc Location) {
	st := open(t, loc)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Log().Append(ctx, kernel.Event{Type: "x", Time: t0}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: error = %v, want context.Canceled", err)
	}
	if _, err := st.Blobs().Put(ctx, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context: error = %v, want context.Canceled", err)
	}
	if got, err := st.Log().Read(context.Background(), 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read = %d events, %v; want none", len(got), err)
	}
}

// Events and blobs survive closing the store and opening the location again,
// and numbering continues where it stopped. Seen failing with New dropping
// the tables it finds.
func testReopen(t *testing.T, loc Location) {
	ctx := context.Background()
	st := open(t, loc)
	events := sampleEvents()
	appendAll(t, st.Log(), events)
	hash, err := st.Blobs().Put(ctx, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st2 := open(t, loc)
	got, err := st2.Log().Read(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got, events, 1)
	if seq, err := st2.Log().Append(ctx, kernel.Event{Type: "x", Time: t0}); err != nil || seq != int64(len(events)+1) {
		t.Fatalf("Append after reopen = %d, %v; want %d", seq, err, len(events)+1)
	}
	if data, err := st2.Blobs().Get(ctx, hash); err != nil || string(data) != "code" {
		t.Fatalf("Get after reopen = %q, %v; want \"code\"", data, err)
	}
}

// The store's database holds the kernel tables, is shared with plugins, and
// is closed with the store. Seen failing with Close leaving the database
// open.
func testStoreDatabase(t *testing.T, loc Location) {
	ctx := context.Background()
	st := open(t, loc)
	db := st.Database()
	wantColumns(t, db, "kernel_events", "seq", "type", "plugin", "time", "data")
	wantColumns(t, db, "kernel_blobs", "hash", "data")
	mustExec(t, db, `CREATE TABLE c_notes (body TEXT)`)
	for i := range 2 {
		if err := st.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if _, err := db.Query(ctx, `SELECT 1 AS one`); !errors.Is(err, contracts.ErrClosed) {
		t.Fatalf("Query after the store closed: error = %v, want ErrClosed", err)
	}
	if _, err := st.Log().Read(ctx, 0, 0); !errors.Is(err, contracts.ErrClosed) {
		t.Fatalf("Read after the store closed: error = %v, want ErrClosed", err)
	}
}
