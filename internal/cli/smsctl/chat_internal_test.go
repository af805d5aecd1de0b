package smsctl

import (
	"bytes"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// kubectl sms chat prints the model's reasoning only with --thinking, on
// lines of its own after "thinking:". Seen failing with show ignoring
// the flag.
func TestChatShowsThinkingWhenAsked(t *testing.T) {
	events := []adminv1.ChatEvent{
		{Type: adminv1.ChatThinkingDelta, Text: "They want "},
		{Type: adminv1.ChatThinkingDelta, Text: "a tool."},
		{Type: adminv1.ChatTextDelta, Text: "Done"},
		{Type: adminv1.ChatTextDelta, Text: "."},
	}
	for _, c := range []struct {
		thinking bool
		want     string
	}{{false, "Done.\n"}, {true, "thinking: They want a tool.\nDone.\n"}} {
		var out bytes.Buffer
		s := &chatScreen{p: &printer{w: &out}, thinking: c.thinking}
		for _, ev := range events {
			if err := s.show(ev); err != nil {
				t.Fatal(err)
			}
		}
		s.flow("")
		if out.String() != c.want {
			t.Errorf("--thinking=%v printed %q, want %q", c.thinking, out.String(), c.want)
		}
	}
}
