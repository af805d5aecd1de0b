//go:build !nodev

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/internal/cli/devenv"
	"github.com/sms-baseline/sms/kernelcmd"
)

// devCommands are the commands only development builds have: the image's
// binary is built with -tags nodev and links no control plane.
func devCommands() []*cobra.Command { return []*cobra.Command{newDevCommand()} }

// devFlags are the flags of `manager dev`.
type devFlags struct {
	opts    devenv.Options
	verbose bool
}

// newDevCommand returns `manager dev`: the whole product on this machine,
// with no cluster.
func newDevCommand() *cobra.Command {
	f := &devFlags{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run an embedded control plane, the operator and local kernels; state is kept under --dir",
		Long: `Run an embedded kube-apiserver and etcd (built by hack/setup-envtest.sh on first use),
install the sms CRDs, and run the operator with kernels inside this process. Use it with kubectl
through the kubeconfig it writes. Tenants without spec.model chat with --model: by default the
scripted demo model, which works offline. Ctrl-C stops everything; starting again restores it.
It runs anywhere: the manifests, samples and scripts it needs are built into the binary and
unpacked under --dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDev(cmd, f) },
	}
	fl := cmd.Flags()
	m := &f.opts.Model
	fl.StringVar(&f.opts.Dir, "dir", ".sms", "directory of etcd's data, the kernels' data, the kubeconfig and the lock")
	fl.StringVar(&m.Provider, "model", string(smsv1.ModelScripted), "model of tenants whose spec names none: "+kernelcmd.Models.Choices())
	fl.StringVar(&m.Name, "model-name", "", "the provider's model name")
	fl.StringVar(&m.BaseURL, "model-base-url", "", "the provider's base URL (a local OpenAI-compatible server with --model openaicompat)")
	fl.StringVar(&m.Script, "model-script", "", "JSON file of turns for --model scripted (default: the built-in doubler demo)")
	fl.StringVar(&m.KeyFile, "model-key-file", "", "file holding the model key (default: "+contracts.OrList(kernelcmd.ModelKeyEnv())+")")
	fl.StringVar(&f.opts.Executor, "executor", "", "run every tenant's agent plugins with this executor ("+kernelcmd.Executors.Choices()+") instead of its spec's")
	fl.StringToStringVar(&f.opts.Images, "image", nil, "run this kernel binary for Tenants whose spec.image is IMAGE, as IMAGE=PATH (repeatable): an application's kernel built with kernelcmd")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the operator's and the kernels' work")
	return cmd
}

func runDev(cmd *cobra.Command, f *devFlags) error {
	root, err := devenv.Unpack(filepath.Join(f.opts.Dir, "files"))
	if err != nil {
		return err
	}
	if root, err = filepath.Abs(root); err != nil {
		return err
	}
	f.opts.Root = root
	if err := devImages(&f.opts); err != nil {
		return err
	}
	if err := devModel(&f.opts); err != nil {
		return err
	}
	out := cmd.ErrOrStderr()
	f.opts.Progress = out
	logOut := io.Discard
	if f.verbose {
		logOut = out
	}
	f.opts.Logger = slog.New(slog.NewTextHandler(logOut, nil))
	ctrl.SetLogger(zap.New(zap.WriteTo(logOut)))
	env, err := devenv.Start(f.opts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = env.Run(ctx, func() { printNext(cmd.OutOrStdout(), root, env.Kubeconfig) })
	_, _ = fmt.Fprintln(out, "Stopping: kernels, then kube-apiserver and etcd. State stays in", env.Dir)
	if serr := env.Stop(); err == nil {
		err = serr
	}
	return err
}

// devImages makes each --image binary's path absolute and checks that it
// is an executable file.
func devImages(o *devenv.Options) error {
	for image, bin := range o.Images {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return fmt.Errorf("--image %s=%s: %w", image, bin, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return fmt.Errorf("--image %s=%s: %w", image, bin, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("--image %s=%s: not an executable file", image, bin)
		}
		o.Images[image] = abs
	}
	return nil
}

// devModel checks the default model's and the executor's flags against
// the kernel's drivers, and makes the script's path absolute.
func devModel(o *devenv.Options) error {
	m := &o.Model
	if m.Provider != "" && !slices.Contains(kernelcmd.TenantModels(), m.Provider) {
		return fmt.Errorf("--model %q: want %s (tenants' kernels take no single-user model)", m.Provider, contracts.OrList(kernelcmd.TenantModels()))
	}
	if _, err := kernelcmd.Executors.Lookup(o.Executor); o.Executor != "" && err != nil {
		return fmt.Errorf("--executor %q: want %s", o.Executor, kernelcmd.Executors.Choices())
	}
	if m.Provider != string(smsv1.ModelScripted) {
		m.Script = ""
		return nil
	}
	if m.Script == "" {
		m.Script = filepath.Join(o.Root, "docs", "examples", "scripted-doubler.json")
	}
	if _, err := os.Stat(m.Script); err != nil {
		return fmt.Errorf("--model-script: %w", err)
	}
	return nil
}

// printNext tells the user what to type next: kubectl sms is expected
// next to this binary (make binaries puts both in bin/).
func printNext(w io.Writer, root, kubeconfig string) {
	bin := "bin"
	if exe, err := os.Executable(); err == nil {
		bin = filepath.Dir(exe)
	}
	_, _ = fmt.Fprintf(w, `sms is running. In another terminal:

  export KUBECONFIG=%s PATH=%s:$PATH
  kubectl apply -f %s
  kubectl wait --for=condition=Ready tenant/demo
  kubectl sms status demo

The README's walk-through goes on from there. Ctrl-C stops everything;
the next start restores it.
`, kubeconfig, bin, filepath.Join(root, "config", "samples", "sms_v1_tenant.yaml"))
}
