package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/baseline"
	gojaexec "github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// kernelFlags are the flags of `manager kernel`.
type kernelFlags struct {
	listen, store, schema, name string
	tokenFile, executor         string
	model                       modelFlags
	autoApprove                 bool
	sensitivePoints             []string
	sensitiveScopes             []string
}

// newKernelCommand returns `manager kernel`: one tenant's kernel server.
func newKernelCommand() *cobra.Command {
	f := &kernelFlags{}
	cmd := &cobra.Command{
		Use:   "kernel",
		Short: "Serve one tenant's kernel: its plugins, judge and admin API over HTTP",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runKernel(ctx, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8787", "address to serve HTTP on")
	fl.StringVar(&f.store, "store", "sqlite:./sms-data/kernel.db", "sqlite:PATH or a postgres:// URL")
	fl.StringVar(&f.schema, "schema", "", "Postgres schema of this tenant (default public)")
	fl.StringVar(&f.name, "name", "kernel", "name of the kernel in logs and the admin API")
	fl.StringVar(&f.tokenFile, "admin-token-file", "", "file holding the admin bearer token (default: admin API open)")
	fl.StringVar(&f.executor, "executor", "isolated", "where agent code runs: isolated (child processes with OS limits) or goja (in process)")
	fl.StringVar(&f.model.provider, "model", "", "the chat agent's model: scripted, anthropic, openai or openaicompat (default: no chat agent)")
	fl.StringVar(&f.model.name, "model-name", "", "the provider's model name")
	fl.StringVar(&f.model.baseURL, "model-base-url", "", "the provider's base URL (required for openaicompat: OpenRouter, Ollama, vLLM)")
	fl.StringVar(&f.model.script, "model-script", "", "JSON file of turns for --model scripted")
	fl.StringVar(&f.model.keyFile, "model-key-file", "", "file holding the model key (default: ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY)")
	fl.BoolVar(&f.autoApprove, "auto-approve", false, "mount sensitive plugins without a human (taints the kernel)")
	fl.StringSliceVar(&f.sensitivePoints, "sensitive-points", nil, "points whose contributions need approval (default "+strings.Join(judge.DefaultSensitivePoints, ",")+")")
	fl.StringSliceVar(&f.sensitiveScopes, "sensitive-scopes", nil, "scopes that need approval (default "+strings.Join(judge.DefaultSensitiveScopes, ",")+")")
	return cmd
}

func runKernel(ctx context.Context, f *kernelFlags) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	token, err := readToken(f.tokenFile)
	if err != nil {
		return err
	}
	exec, err := newExecutor(f.executor, logger)
	if err != nil {
		return err
	}
	model, err := newModel(f.model)
	if err != nil {
		return err
	}
	st, err := baseline.OpenStore(ctx, f.store, f.schema)
	if err != nil {
		return err
	}
	b, err := baseline.New(ctx, baseline.Options{Name: f.name, Store: st, Executor: exec, AdminToken: token, Logger: logger, Model: model,
		Policy: judge.Policy{AutoApprove: f.autoApprove, SensitivePoints: f.sensitivePoints, SensitiveScopes: f.sensitiveScopes}})
	if err != nil {
		return err // New closed the store
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), b.Close())
	}
	logger.Info("Kernel serving", "kernel", f.name, "addr", ln.Addr().String(), "store", redact(f.store),
		"executor", f.executor, "auth", map[bool]string{true: "token", false: "open"}[token != ""])
	err = b.Serve(ctx, ln, baseline.ServeOptions{})
	logger.Info("Kernel stopped", "kernel", f.name)
	return errors.Join(err, b.Close())
}

func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("read admin token: %s is empty", path)
	}
	return token, nil
}

func newExecutor(name string, logger *slog.Logger) (kernel.Executor, error) {
	switch name {
	case "goja":
		return gojaexec.New(gojaexec.Options{Logger: logger}), nil
	case "isolated":
		return isolated.New(isolated.Options{Logger: logger})
	}
	return nil, fmt.Errorf("--executor %q: want isolated or goja", name)
}

// redact hides a password in a store URL for logs.
func redact(spec string) string {
	if i := strings.Index(spec, "@"); i > 0 && strings.Contains(spec[:i], "://") {
		scheme, _, _ := strings.Cut(spec, "://")
		return scheme + "://…@" + spec[i+1:]
	}
	return spec
}
