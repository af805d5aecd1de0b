package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/kernelcmd"
)

// stopGrace is how long a child kernel has to stop after SIGTERM before
// it is killed.
const stopGrace = 10 * time.Second

// binary is the kernel binary the tenant's spec.image stands for, or ""
// for the manager's own kernel (run in this process).
func (l *Runtime) binary(t *smsv1.Tenant) (string, error) {
	image := t.Spec.Image
	if image == "" {
		return "", nil
	}
	if bin, ok := l.opts.Images[image]; ok {
		return bin, nil
	}
	return "", fmt.Errorf("%w: spec.image %q: the local runtime runs an image's kernel binary, and none is given for this image "+
		"(start manager dev with --image %s=PATH)", kernelruntime.ErrInvalidSpec, image, image)
}

// startChild runs the kernel binary bin with cfg's arguments, as the
// kubernetes runtime runs its image, on the tenant's loopback port.
func (l *Runtime) startChild(dir, bin string, cfg kernelcmd.Config) (*localKernel, error) {
	ln, err := listenLoopback(filepath.Join(dir, "port"))
	if err != nil {
		return nil, err
	}
	// The child listens on the port this process held a moment ago.
	cfg.Listen = ln.Addr().String()
	if err := ln.Close(); err != nil {
		return nil, fmt.Errorf("free the kernel's port: %w", err)
	}
	logger := l.opts.Logger.With("kernel", cfg.Name, "binary", bin)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, cfg.Args()...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	out := lineLogger(logger)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, errors.Join(fmt.Errorf("start kernel %s: %w", cfg.Name, err), out.Close())
	}
	k := &localKernel{endpoint: "http://" + cfg.Listen, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		err := cmd.Wait()
		if err != nil && ctx.Err() == nil {
			logger.Error("Kernel process exited", "error", err)
		}
		_ = out.Close() // ends the logging goroutine
	}()
	return k, nil
}

// lineLogger returns a writer whose lines go to logger, one record each.
func lineLogger(logger *slog.Logger) io.WriteCloser {
	r, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			logger.Info(sc.Text())
		}
		_ = r.CloseWithError(sc.Err()) // a writer past the scanner's limit gets the error
	}()
	return w
}
