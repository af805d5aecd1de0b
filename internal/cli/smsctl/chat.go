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
	cmd := &cobra.Command{
		Use:     "chat TENANT TEXT",
		Short:   "Ask the tenant's agent for a change and stream its reply",
		Example: "  kubectl sms chat demo 'add a tool that doubles a number'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.chat(cmd.Context(), args[0], session, args[1])
		},
	}
	cmd.Flags().StringVar(&session, "session", "kubectl", "conversation to continue; the kernel keeps each session's transcript")
	return cmd
}

func (o *options) chat(ctx context.Context, tenant, session, text string) error {
	kc, closeKernel, err := o.kernel(ctx, tenant)
	if err != nil {
		return err
	}
	defer closeKernel()
	p := &printer{w: o.Out}
	inText := false
	err = kc.ChatStream(ctx, session, text, func(ev adminv1.ChatEvent) error {
		if ev.Type != adminv1.ChatTextDelta && inText {
			p.printf("\n")
			inText = false
		}
		switch ev.Type {
		case adminv1.ChatTextDelta:
			p.printf("%s", ev.Text)
			inText = true
		case adminv1.ChatToolCall:
			if ev.Step != nil {
				p.printf("-> %s %s\n", ev.Step.Tool, ev.Step.Input)
			}
		case adminv1.ChatToolResult:
			if ev.Step != nil {
				p.printf("<- %s\n", ev.Step.Result)
			}
		case adminv1.ChatVerdict:
			if v := ev.Verdict; v != nil {
				p.printf("verdict: %s\n", verdictLine(v))
			}
		}
		return p.err
	})
	if inText {
		p.printf("\n")
	}
	return errors.Join(err, p.err)
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
