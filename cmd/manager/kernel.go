package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/internal/kernelcmd"
)

// newKernelCommand returns `manager kernel`: one tenant's kernel server.
func newKernelCommand() *cobra.Command {
	var c kernelcmd.Config
	cmd := &cobra.Command{
		Use:   "kernel",
		Short: "Serve one tenant's kernel: its plugins, judge and admin API over HTTP",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			return kernelcmd.Run(ctx, c, nil, logger)
		},
	}
	kernelcmd.BindFlags(cmd.Flags(), &c)
	return cmd
}
