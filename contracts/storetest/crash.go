package storetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// envCrashChild carries the location a crash child appends to.
const envCrashChild = "SMS_STORETEST_CRASH_LOCATION"

// crashAfter is how many returned appends the parent waits for before it
// kills the child.
const crashAfter = 200

const crashEvent = "storetest/crash"

type crashData struct {
	N int64 `json:"n"`
}

// CrashChild turns the process into RunCrash's child when the environment
// says so, and otherwise returns at once. Call it first in TestMain, before
// m.Run. The child opens the store with open at the location RunCrash was
// given, appends events until it is killed, and prints "seq n" on stdout
// after each Append returned.
func CrashChild(open func(ctx context.Context, location string) (contracts.Store, error)) {
	location, ok := os.LookupEnv(envCrashChild)
	if !ok {
		return
	}
	os.Exit(runCrashChild(open, location))
}

func runCrashChild(open func(ctx context.Context, location string) (contracts.Store, error), location string) int {
	ctx := context.Background()
	st, err := open(ctx, location)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crash child: open %s: %v\n", location, err)
		return 2
	}
	for n := int64(1); ; n++ {
		data, _ := json.Marshal(crashData{N: n})
		seq, err := st.Log().Append(ctx, kernel.Event{Type: crashEvent, Time: t0, Data: data})
		if err != nil {
			fmt.Fprintf(os.Stderr, "crash child: append %d: %v\n", n, err)
			return 2
		}
		// os.Stdout is unbuffered: the line is in the pipe before the next
		// append starts, so the parent hears of every append that returned.
		if _, err := fmt.Fprintf(os.Stdout, "%d %d\n", seq, n); err != nil {
			return 2
		}
	}
}

// RunCrash re-executes the test binary as CrashChild appending to location
// (which must be new and empty), kills it with SIGKILL once it has reported
// enough appends, and opens the location with loc: every event whose Append
// returned must be there under the number reported, the log must have no
// gaps, and at most the one append in flight may have landed unreported.
// Seen failing with Append reporting its number before the insert ran.
func RunCrash(t *testing.T, location string, loc Location) {
	reported, stderr := runChild(t, location)
	st := open(t, loc)
	events, err := st.Log().Read(context.Background(), 0, 0)
	if err != nil {
		t.Fatalf("read after the crash: %v", err)
	}
	last := int64(len(reported))
	if n := int64(len(events)); n != last && n != last+1 {
		t.Fatalf("the log holds %d events after the crash, want %d (reported) or %d (one in flight)\nchild stderr: %s",
			n, last, last+1, stderr)
	}
	for i, e := range events {
		var d crashData
		if err := json.Unmarshal(e.Data, &d); err != nil || e.Type != crashEvent {
			t.Fatalf("event %d = %+v (data %s), want a whole %s event: %v", i, e, e.Data, crashEvent, err)
		}
		if e.Seq != int64(i+1) || d.N != e.Seq {
			t.Fatalf("event %d has seq %d and n %d, want %d for both", i, e.Seq, d.N, i+1)
		}
	}
	for seq, n := range reported {
		if seq != n {
			t.Fatalf("the child reported append %d as seq %d, want %d", n, seq, n)
		}
	}
}

// runChild starts the child, kills it after crashAfter reported appends and
// returns every append it reported (seq -> n) and its stderr.
func runChild(t *testing.T, location string) (map[int64]int64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), envCrashChild+"="+location)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the crash child: %v", err)
	}
	reported := map[int64]int64{}
	killed := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		var seq, n int64
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &seq, &n); err != nil {
			t.Errorf("the crash child printed %q, want \"seq n\"", sc.Text())
			continue
		}
		reported[seq] = n
		if len(reported) == crashAfter && !killed {
			killed = cmd.Process.Kill() == nil // SIGKILL, mid-stream
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the crash child stopped after %d appends, before it was killed: %v\nstderr: %s",
			len(reported), err, stderr.String())
	}
	return reported, stderr.String()
}
