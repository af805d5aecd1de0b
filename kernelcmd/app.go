package kernelcmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// App is an application's kernel binary: the kernel command of sms with
// the application's own system plugins. The zero App is `manager
// kernel`'s. A downstream main is one line:
//
//	func main() { kernelcmd.App{Name: "erp-kernel", Plugins: erp.Plugins()}.Main() }
//
// The binary then has the subcommands, flags, listeners, credentials,
// drivers and probes the operator relies on (docs/applications.md), so a
// Tenant's spec.image can name its image.
type App struct {
	// Name is the binary's name in its help and errors. Default "kernel".
	Name string
	// Plugins are the application's system plugins (its domain modules:
	// models, routes, tools, groups and rules), installed after the
	// baseline's, in order. Each kernel the binary starts installs them.
	Plugins []kernel.Plugin
}

// Main runs the binary's command line with os.Args and exits: with status
// 1 and the error on stderr when the command fails.
func (a App) Main() {
	if err := a.Command().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", a.name(), err)
		os.Exit(1)
	}
}

// Command returns the binary's command tree: `kernel`, which serves one
// tenant's kernel, and the hidden `sandbox`, which the isolated executor
// starts (as this same executable) for each agent plugin.
func (a App) Command() *cobra.Command {
	root := &cobra.Command{
		Use:           a.name(),
		Short:         "A self-modifying application's kernel",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(a.KernelCommand(), SandboxCommand())
	return root
}

// KernelCommand returns the `kernel` subcommand alone, for a command tree
// of one's own (the manager's).
func (a App) KernelCommand() *cobra.Command {
	var c Config
	cmd := &cobra.Command{
		Use:   "kernel",
		Short: "Serve one tenant's kernel: its plugins, judge and admin API over HTTP",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			return a.Run(ctx, c, nil, logger)
		},
	}
	BindFlags(cmd.Flags(), &c)
	return cmd
}

// SandboxCommand returns the hidden child-process entry point of the
// isolated executor: it serves one agent plugin over stdin and stdout,
// with the limits the parent sets in the environment. Every binary whose
// kernels use the isolated executor needs it, under this name.
func SandboxCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "sandbox",
		Short:  "Serve one agent plugin over stdin and stdout under OS limits (started by the isolated executor)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := isolated.ChildOptionsFromEnv()
			if err != nil {
				return err
			}
			return isolated.ServeChild(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), opts)
		},
	}
}

// Start opens the kernel c describes with the application's plugins; see
// the package-level Start.
func (a App) Start(ctx context.Context, c Config, logger *slog.Logger) (*baseline.Baseline, error) {
	return start(ctx, c, a.Plugins, logger)
}

// Run serves the kernel c describes with the application's plugins; see
// the package-level Run.
func (a App) Run(ctx context.Context, c Config, ln net.Listener, logger *slog.Logger) error {
	return run(ctx, c, runOptions{ln: ln, logger: logger, plugins: a.Plugins})
}

func (a App) name() string {
	if a.Name == "" {
		return "kernel"
	}
	return a.Name
}
