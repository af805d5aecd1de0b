package kernel_test

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

func noop(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil }

// Propose needs an authorization the kernel minted for exactly this id,
// version and code, and honours it once. Seen failing with the issued-map
// lookup removed, with the nonce left unconsumed after use, and with the
// code-hash comparison removed.
func TestMountAuthorization(t *testing.T) {
	ctx := context.Background()
	m := kernel.Manifest{ID: "agent.a", Version: "1"}
	code := []byte("noop")
	cases := []struct {
		name string
		auth func(k *kernel.Kernel) kernel.MountAuthorization
		p    func(p kernel.Proposal) kernel.Proposal
	}{
		{"missing", func(*kernel.Kernel) kernel.MountAuthorization { return kernel.MountAuthorization{} }, nil},
		{"forged", func(*kernel.Kernel) kernel.MountAuthorization {
			return kernel.MountAuthorization{PluginID: m.ID, Version: m.Version, CodeHash: kernel.HashCode(code), Nonce: "00112233445566778899aabbccddeeff"}
		}, nil},
		{"reused", func(k *kernel.Kernel) kernel.MountAuthorization {
			a, _ := k.Authorize(m, kernel.HashCode(code))
			if err := k.Propose(ctx, kernel.Proposal{Manifest: m, Code: code, Auth: a}); err != nil {
				t.Fatalf("first use: %v", err)
			}
			return a
		}, nil},
		{"other code", func(k *kernel.Kernel) kernel.MountAuthorization {
			a, _ := k.Authorize(m, kernel.HashCode(code))
			return a
		}, func(p kernel.Proposal) kernel.Proposal { p.Code = []byte("evil"); return p }},
		{"other version", func(k *kernel.Kernel) kernel.MountAuthorization {
			a, _ := k.Authorize(m, kernel.HashCode(code))
			return a
		}, func(p kernel.Proposal) kernel.Proposal { p.Manifest.Version = "2"; return p }},
		{"other id", func(k *kernel.Kernel) kernel.MountAuthorization {
			a, _ := k.Authorize(kernel.Manifest{ID: "agent.b", Version: "1"}, kernel.HashCode(code))
			return a
		}, nil},
		{"tampered", func(k *kernel.Kernel) kernel.MountAuthorization {
			a, _ := k.Authorize(kernel.Manifest{ID: "agent.b", Version: "1"}, kernel.HashCode(code))
			a.PluginID = m.ID
			return a
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, exec := newKernel(t)
			exec.Register("noop", noop)
			exec.Register("evil", noop)
			p := kernel.Proposal{Manifest: m, Code: code, Auth: tc.auth(k)}
			if tc.p != nil {
				p = tc.p(p)
			}
			wantCode(t, k.Propose(ctx, p), kernel.CodeAuthorization)
		})
	}
	k, exec := newKernel(t)
	exec.Register("noop", noop)
	if err := kerneltest.Agent(ctx, k, m, "noop"); err != nil {
		t.Fatalf("a valid authorization was refused: %v", err)
	}
	wantState(t, k, "agent.a", kernel.StateActive)
	_, err := k.Authorize(m, "md5:abc")
	wantCode(t, err, kernel.CodeValidation)
}

// An agent plugin can never take a system plugin's id, and system plugins
// are uninstalled only with force. Seen failing with the isSystemID check
// and with the force check removed.
func TestReservedIDsAndForcedUninstall(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	exec.Register("noop", noop)
	mustInstall(t, k, provider("judge", "judge", "j"))
	mustSettle(t, k)
	wantCode(t, kerneltest.Agent(ctx, k, kernel.Manifest{ID: "judge", Version: "2"}, "noop"), kernel.CodeReservedID)
	if !k.Tainted().Has(kernel.TaintTrustEscalation) {
		t.Fatalf("taint = %s, want trust_escalation after a reserved-id attempt", k.Tainted())
	}
	wantCode(t, k.Uninstall(ctx, "judge", false), kernel.CodeForbidden)
	wantState(t, k, "judge", kernel.StateActive)
	if err := k.Uninstall(ctx, "judge", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Fiber("judge"); ok || k.Has("judge") {
		t.Fatal("forced uninstall left the fiber or its key behind")
	}
	if !k.Tainted().Has(kernel.TaintForcedUninstall) {
		t.Fatalf("taint = %s, want forced_uninstall", k.Tainted())
	}
	// The id stays reserved for the kernel's lifetime.
	wantCode(t, kerneltest.Agent(ctx, k, kernel.Manifest{ID: "judge", Version: "3"}, "noop"), kernel.CodeReservedID)
	wantCode(t, k.Uninstall(ctx, "judge", true), kernel.CodeNotFound)
}

// Proposing an existing agent id replaces the old version after undoing it;
// the old unit is closed once its transition has drained it. Seen failing
// with the deactivateTree call removed from mount (the old unit was never
// closed).
func TestProposeReplacesAgentPlugin(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	for _, v := range []string{"v1", "v2"} {
		exec.Register(v, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			return h.Provide(ctx, "agent.svc", kerneltest.JSON(v))
		})
	}
	m := kernel.Manifest{ID: "agent.svc", Version: "1", Provide: []string{"agent.svc"}}
	if err := kerneltest.Agent(ctx, k, m, "v1"); err != nil {
		t.Fatal(err)
	}
	m.Version = "2"
	if err := kerneltest.Agent(ctx, k, m, "v2"); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, k, "agent.svc", kernel.PhaseComplete)
	v, _ := k.GetValue("agent.svc")
	view, _ := k.Fiber("agent.svc")
	if v != "v2" || view.Version != "2" || exec.Closed() != 1 || len(k.Fibers()) != 1 {
		t.Fatalf("after update value=%v version=%s closed=%d fibers=%d; want v2, 2, 1, 1", v, view.Version, exec.Closed(), len(k.Fibers()))
	}
}
