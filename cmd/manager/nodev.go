//go:build nodev

package main

import "github.com/spf13/cobra"

// devCommands is empty in the image's build (-tags nodev): no embedded
// control plane, so neither envtest nor its binaries' locator is linked.
func devCommands() []*cobra.Command { return nil }
