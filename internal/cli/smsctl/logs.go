package smsctl

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// newLogsCommand returns logs: the kernel's event log.
func newLogsCommand(o *options) *cobra.Command {
	var follow bool
	var after int64
	cmd := &cobra.Command{
		Use:     "logs TENANT",
		Short:   "Print the tenant kernel's event log: mounts, verdicts, approvals, chat turns",
		Example: "  kubectl sms logs demo\n  kubectl sms logs demo -f",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.logs(cmd.Context(), args[0], after, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	cmd.Flags().Int64Var(&after, "after", 0, "print only events after this sequence number")
	return cmd
}

// logsPoll is how often a followed log asks for new events.
const logsPoll = time.Second

func (o *options) logs(ctx context.Context, tenant string, after int64, follow bool) error {
	kc, closeKernel, err := o.kernel(ctx, tenant)
	if err != nil {
		return err
	}
	defer closeKernel()
	for {
		page, err := kc.Events(ctx, after, 1000)
		if err != nil {
			return err
		}
		for _, ev := range page {
			if err := writeEvent(o.Out, ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if len(page) > 0 {
			continue
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(logsPoll):
		}
	}
}

// writeEvent writes one event as a tab-separated line: sequence number,
// time, type, plugin and data.
func writeEvent(w io.Writer, ev adminv1.Event) error {
	plugin := ev.Plugin
	if plugin == "" {
		plugin = "-"
	}
	_, err := fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", ev.Seq, ev.Time.UTC().Format(time.RFC3339), ev.Type, plugin, ev.Data)
	return err
}
