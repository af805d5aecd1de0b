// Command kubectl-sms is the kubectl plugin for sms: installed on PATH it
// runs as `kubectl sms`. See `kubectl sms --help`.
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/sms-baseline/sms/internal/cli/smsctl"
)

func main() {
	cmd := smsctl.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
