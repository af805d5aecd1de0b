package main

import (
	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
)

// newRootCommand returns the manager's command tree.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "manager",
		Short:         "Run self-modifying applications as Kubernetes tenants",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newKernelCommand(), newOperatorCommand(), newSandboxCommand())
	root.AddCommand(devCommands()...)
	return root
}

// newSandboxCommand returns the hidden child-process entry point of the
// isolated executor. Its limits come from the environment the parent sets.
func newSandboxCommand() *cobra.Command {
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
