package smsctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// options are what every subcommand shares: the kubectl flags and the
// streams.
type options struct {
	flags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
}

// NewCommand returns the plugin's command tree.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	root := &cobra.Command{
		Use:           "kubectl sms",
		Short:         "Work with sms tenants: approve plugins, chat with the agent, export what it built",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newDecideCommand(o, true), newDecideCommand(o, false), newStatusCommand(o),
		newChatCommand(o), newExportCommand(o), newLogsCommand(o), newUsersCommand(o), newGroupsCommand(o))
	return root
}

// restConfig is the cluster's client configuration from the flags.
func (o *options) restConfig() (*rest.Config, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("find the cluster (--kubeconfig, KUBECONFIG or ~/.kube/config): %w", err)
	}
	return cfg, nil
}

// client returns a client for the built-in and sms.dev types and the
// namespace to work in (-n, else the context's).
func (o *options) client() (client.Client, string, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, "", err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	if err := smsv1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connect to the cluster: %w", err)
	}
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("namespace: %w", err)
	}
	return c, ns, nil
}

// printer writes to w and keeps the first error, so a command reports a
// failed write (a closed pipe) once, at its end.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}
