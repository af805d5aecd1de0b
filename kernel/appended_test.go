package kernel_test

import (
	"context"
	"testing"
)

// Appended wakes every reader holding the channel once an event is
// appended, and a refused append wakes none.
// Seen failing with the broadcast taken out of appendEvent: the channel
// stayed open after Record.
func TestAppendedWakesReaders(t *testing.T) {
	ctx := context.Background()
	k, _ := newKernel(t)
	first, second := k.Appended(), k.Appended()
	if err := k.Record(ctx, "plugin/forged", "", nil); err == nil {
		t.Fatal("Record accepted a plugin/* event")
	}
	select {
	case <-first:
		t.Fatal("a refused append closed the channel")
	default:
	}
	if err := k.Record(ctx, "test/appended", "", nil); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan struct{}{first, second} {
		select {
		case <-ch:
		default:
			t.Fatal("Appended's channel is still open after an append")
		}
	}
	select {
	case <-k.Appended():
		t.Fatal("a channel taken after the append is already closed")
	default:
	}
}
