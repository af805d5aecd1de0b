package goja_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// Each bridge budget fails the activation that exceeds it, even when the
// code awaits every call and catches every error.
// Seen failing (the activations succeeded) with charge returning nil.
func TestBridgeBudgets(t *testing.T) {
	cases := []struct {
		name string
		opts goja.Options
		code string
		want string
	}{
		{"calls", goja.Options{MaxHostCalls: 50}, `for (let i = 0; i < 100; i++) { try { await cap.get('k'); } catch (e) {} }`,
			"more than 50 cap calls"},
		{"bytes", goja.Options{MaxHostBytes: 1 << 20}, `const v = 'x'.repeat(100 << 10);
for (let i = 0; i < 20; i++) { try { await cap.provide('k', v); } catch (e) {} }`, "more than 1048576 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := goja.New(c.opts).Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.t", Version: "1"},
				Code: []byte("export default async function activate(cap) {\n" + c.code + "\n}")})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = u.Close() }()
			err = u.Activate(context.Background(), executortest.NewBridge())
			if err == nil || !strings.Contains(err.Error(), "bridge budget exceeded") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("activate = %v, want the bridge budget exceeded with %q", err, c.want)
			}
		})
	}
}
