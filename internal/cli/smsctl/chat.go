package smsctl

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// newChatCommand returns chat: one turn with the tenant's agent, streamed.
func newChatCommand(o *options) *cobra.Command {
	var session string
	var thinking bool
	cmd := &cobra.Command{
		Use:     "chat TENANT TEXT",
		Short:   "Ask the tenant's agent for a change and stream its reply",
		Example: "  kubectl sms chat demo 'add a tool that doubles a number'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.chat(cmd.Context(), chatTurn{tenant: args[0], session: session, text: args[1], thinking: thinking})
		},
	}
	cmd.Flags().StringVar(&session, "session", "kubectl", "conversation to continue; the kernel keeps each session's transcript")
	cmd.Flags().BoolVar(&thinking, "thinking", false, "show the model's reasoning too, where its driver streams it (after \"thinking:\")")
	return cmd
}

// chatTurn is what chat sends and how it shows the answer.
type chatTurn struct {
	tenant, session, text string
	// thinking shows the model's reasoning.
	thinking bool
}

func (o *options) chat(ctx context.Context, turn chatTurn) error {
	kc, closeKernel, err := o.kernel(ctx, turn.tenant)
	if err != nil {
		return err
	}
	defer closeKernel()
	s := &chatScreen{p: &printer{w: o.Out}, thinking: turn.thinking}
	err = kc.ChatStream(ctx, turn.session, turn.text, s.show)
	s.flow("")
	return errors.Join(err, s.p.err)
}

// chatScreen prints a streamed turn: the reply's text as it comes, the
// reasoning (when asked) after "thinking:", and one line per step.
type chatScreen struct {
	p        *printer
	thinking bool
	flowing  string // the delta type being printed, or ""
}

// flow ends the running text unless it is of type typ, and starts one of
// type typ.
func (s *chatScreen) flow(typ string) {
	if s.flowing == typ {
		return
	}
	if s.flowing != "" {
		s.p.printf("\n")
	}
	if typ == adminv1.ChatThinkingDelta {
		s.p.printf("thinking: ")
	}
	s.flowing = typ
}

func (s *chatScreen) show(ev adminv1.ChatEvent) error {
	switch ev.Type {
	case adminv1.ChatTextDelta:
		s.flow(ev.Type)
		s.p.printf("%s", ev.Text)
	case adminv1.ChatThinkingDelta:
		if s.thinking {
			s.flow(ev.Type)
			s.p.printf("%s", ev.Text)
		}
	case adminv1.ChatToolCall:
		s.flow("")
		if ev.Step != nil {
			s.p.printf("-> %s %s\n", ev.Step.Tool, ev.Step.Input)
		}
	case adminv1.ChatToolResult:
		s.flow("")
		if ev.Step != nil {
			s.p.printf("<- %s\n", ev.Step.Result)
		}
	case adminv1.ChatVerdict:
		s.flow("")
		if v := ev.Verdict; v != nil {
			s.p.printf("verdict: %s\n", verdictLine(v))
		}
	}
	return s.p.err
}

// verdictLine is a judge's verdict in one line: status and plugin, the
// gate of a rejection and the reason.
func verdictLine(v *adminv1.Verdict) string {
	s := string(v.Status) + " " + v.PluginID
	if v.Status == adminv1.StatusRejected && v.Gate != "" {
		s += " at gate " + v.Gate
	}
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	return s
}
