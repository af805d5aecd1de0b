package executortest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

// Names the host plugin of the suite defines and provides.
const (
	// PointTool is an extension point agent plugins contribute tools to.
	PointTool = "tool"
	// PointSystem is a point only system plugins may contribute to.
	PointSystem = "sys-only"
	// KeyConfig is a plain value agents may read.
	KeyConfig = "config"
	// KeyService is an Invoker service agents may call.
	KeyService = "svc"
	// KeySecret is a key only system plugins may read.
	KeySecret = "secret"
)

// ctxKey carries a value through a call, to show the context reaches host
// calls made on the call's behalf.
type ctxKey struct{}

// WithValue returns ctx carrying v where Service's "ctx" method finds it.
func WithValue(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// Service is the Invoker the suite provides under KeyService.
type Service struct {
	mu      sync.Mutex
	calls   int
	waiting chan struct{} // a "meet" call waiting for the next one
	blocked chan struct{} // a "block" call started; made by chans
	ended   chan error    // a "block" call ended: its context's error; made by chans
}

// Invoke implements kernel.Invoker.
func (s *Service) Invoke(ctx context.Context, method string, args []any) (any, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	switch method {
	case "echo":
		return map[string]any{"args": args}, nil
	case "add":
		var sum float64
		for _, a := range args {
			n, _ := a.(float64)
			sum += n
		}
		return sum, nil
	case "big":
		return strings.Repeat("x", kernel.MaxSnapshotBytes+1), nil
	case "ctx":
		v, _ := ctx.Value(ctxKey{}).(string)
		return v, nil
	case "fail":
		return nil, errors.New("the service failed on purpose")
	case "meet":
		return s.meet(ctx)
	case "block":
		return s.block(ctx)
	}
	return nil, &kernel.Error{Code: kernel.CodeNotFound, Message: "no method " + method}
}

// meet returns once another "meet" call has arrived: two calls that each
// wait for the other, which only works if they are made concurrently.
func (s *Service) meet(ctx context.Context) (any, error) {
	s.mu.Lock()
	if s.waiting != nil {
		close(s.waiting)
		s.waiting = nil
		s.mu.Unlock()
		return "met", nil
	}
	ch := make(chan struct{})
	s.waiting = ch
	s.mu.Unlock()
	select {
	case <-ch:
		return "met", nil
	case <-ctx.Done():
		return nil, fmt.Errorf("meet: nobody came: %w", ctx.Err())
	}
}

// blockGuard bounds a "block" call whose context never ends, so that a
// test of an executor that loses the context fails instead of hanging.
const blockGuard = time.Minute

// block waits until ctx ends, as a host function doing slow work that
// honours its context does. It reports that it started on Blocked and
// ctx's error on Unblocked (nil when ctx never ended and the guard did).
func (s *Service) block(ctx context.Context) (any, error) {
	blocked, ended := s.chans()
	blocked <- struct{}{}
	guard := time.NewTimer(blockGuard)
	defer guard.Stop()
	select {
	case <-ctx.Done():
		ended <- ctx.Err()
		return nil, fmt.Errorf("block: %w", context.Cause(ctx))
	case <-guard.C:
		ended <- nil
		return "the context never ended", nil
	}
}

func (s *Service) chans() (blocked chan struct{}, ended chan error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blocked == nil {
		s.blocked, s.ended = make(chan struct{}, 16), make(chan error, 16)
	}
	return s.blocked, s.ended
}

// Blocked receives a value each time a "block" call starts.
func (s *Service) Blocked() <-chan struct{} {
	blocked, _ := s.chans()
	return blocked
}

// Unblocked receives, each time a "block" call ends, the error of the
// context it was given (context.DeadlineExceeded or context.Canceled), or
// nil when that context never ended.
func (s *Service) Unblocked() <-chan error {
	_, ended := s.chans()
	return ended
}

// Calls returns how many times the service was invoked.
func (s *Service) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Env is a kernel with the suite's host plugin installed and settled.
type Env struct {
	K       *kernel.Kernel
	Service *Service
	Logs    *LogCapture
}

// NewEnv returns a kernel that runs agent plugins with exec, with a system
// plugin that defines PointTool and PointSystem and provides KeyConfig,
// KeyService and KeySecret.
func NewEnv(t testing.TB, exec kernel.Executor) *Env {
	t.Helper()
	logs := &LogCapture{}
	k := kernel.New(kernel.Options{Name: "executortest", Executor: exec, Logger: slog.New(logs)})
	svc := &Service{}
	host := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.host", Version: "1", Provide: []string{KeyConfig, KeyService, KeySecret}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			api := c.Kernel()
			if err := errors.Join(
				api.DefinePoint(PointTool, kernel.PointMeta{Description: "{name, handler}"}),
				api.DefinePoint(PointSystem, kernel.PointMeta{MinContributorTrust: kernel.TrustSystem}),
				api.DefineKey(KeySecret, kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
			); err != nil {
				return err
			}
			return errors.Join(
				c.Provide(KeyConfig, map[string]any{"name": "acme", "limit": 3.0}),
				c.Provide(KeyService, svc),
				c.Provide(KeySecret, "hunter2"),
			)
		},
	}
	if err := k.Install(host); err != nil {
		t.Fatalf("install host plugin: %v", err)
	}
	if err := k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
	return &Env{K: k, Service: svc, Logs: logs}
}

// LogCapture is a slog.Handler that keeps every record's message and attributes.
type LogCapture struct {
	mu      sync.Mutex
	records []string
}

// Enabled implements slog.Handler.
func (*LogCapture) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (l *LogCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	l.mu.Lock()
	l.records = append(l.records, b.String())
	l.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (l *LogCapture) WithAttrs(attrs []slog.Attr) slog.Handler { return &attrHandler{l, attrs} }

// WithGroup implements slog.Handler.
func (l *LogCapture) WithGroup(string) slog.Handler { return l }

// Records returns the captured records as "LEVEL message key=value ...".
func (l *LogCapture) Records() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.records...)
}

type attrHandler struct {
	*LogCapture
	attrs []slog.Attr
}

func (h *attrHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(h.attrs...)
	return h.LogCapture.Handle(ctx, r)
}

func (h *attrHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &attrHandler{h.LogCapture, append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

// Bridge is a HostBridge for driving a Unit without a kernel. It records
// what the unit provides and contributes and answers Get from Values.
type Bridge struct {
	mu       sync.Mutex
	Values   map[string]json.RawMessage
	Provided map[string]json.RawMessage
	Items    []json.RawMessage
	Lines    []string
}

// NewBridge returns an empty bridge.
func NewBridge() *Bridge {
	return &Bridge{Values: map[string]json.RawMessage{}, Provided: map[string]json.RawMessage{}}
}

// Get implements kernel.HostBridge.
func (b *Bridge) Get(_ context.Context, key string) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.Values[key]
	if !ok {
		return nil, errors.New("no value for " + key)
	}
	return v, nil
}

// Invoke implements kernel.HostBridge by echoing its arguments.
func (b *Bridge) Invoke(_ context.Context, _, _ string, args json.RawMessage) (json.RawMessage, error) {
	return args, nil
}

// Provide implements kernel.HostBridge.
func (b *Bridge) Provide(_ context.Context, key string, value json.RawMessage) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Provided[key] = value
	return nil
}

// Contribute implements kernel.HostBridge.
func (b *Bridge) Contribute(_ context.Context, _ string, item json.RawMessage) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Items = append(b.Items, item)
	return "c1", nil
}

// Log implements kernel.HostBridge.
func (b *Bridge) Log(_ context.Context, level, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Lines = append(b.Lines, level+" "+msg)
}
