package main

import (
	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/kernelcmd"
)

// newRootCommand returns the manager's command tree.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "manager",
		Short:         "Run self-modifying applications as Kubernetes tenants",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newKernelCommand(), newOperatorCommand(), kernelcmd.SandboxCommand())
	root.AddCommand(devCommands()...)
	return root
}
