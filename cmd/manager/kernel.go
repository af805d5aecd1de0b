package main

import (
	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/kernelcmd"
)

// newKernelCommand returns `manager kernel`: one tenant's kernel server,
// the public kernel command with no application plugins.
func newKernelCommand() *cobra.Command { return kernelcmd.App{}.KernelCommand() }
