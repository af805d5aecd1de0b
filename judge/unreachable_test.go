package judge_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// propose mounts a plugin around the judge, as a compromised path would.
func propose(k *kernel.Kernel, m kernel.Manifest, code string) error {
	auth, err := k.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		return err
	}
	return k.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth})
}

// The judge key is system-only: the trust gate refuses a plugin that
// declares it, and even mounted around the judge, its code cannot read it.
// Seen failing with the judge key defined with MinConsumerTrust agent.
func TestJudgeKeyIsSystemOnly(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m := manifest("agent.reach")
	m.Optional = []string{judge.Key}
	code := `export default async function activate(cap) { await cap.get('judge'); }`
	wantVerdict(t, w.submit(t, m, code), expect{judge.StatusRejected, judge.GateTrust, `key "judge" is system-only`})
	err := propose(w.k, m, code)
	if err == nil || !strings.Contains(err.Error(), "needs system trust") {
		t.Fatalf("reading the judge from agent code: error %v, want a trust refusal", err)
	}
}

// The gate and invariant points are system-only: refused declared (as
// items or in points), undeclared at load, and by the kernel around the
// judge.
// Seen failing with GatePoint and InvariantPoint defined with agent trust.
func TestGateAndInvariantPointsAreSystemOnly(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	for _, point := range []string{judge.GatePoint, judge.InvariantPoint} {
		declared := manifest("agent.declared-" + point)
		declared.Contributes = map[string][]any{point: {map[string]any{"name": "mine"}}}
		wantVerdict(t, w.submit(t, declared, toolCode("x")), expect{judge.StatusRejected, judge.GateTrust, "system-only"})
		code := `export default async function activate(cap) { await cap.contribute('` + point + `', { name: 'mine' }); }`
		wantVerdict(t, w.submit(t, manifest("agent.load-"+point), code), expect{judge.StatusRejected, judge.GateLoad, "not declared"})
		listed := manifest("agent.listed-" + point)
		listed.Points = []string{point}
		wantVerdict(t, w.submit(t, listed, code), expect{judge.StatusRejected, judge.GateTrust, "system-only"})
		err := propose(w.k, listed, code)
		if err == nil || !strings.Contains(err.Error(), "needs system trust") {
			t.Fatalf("contributing to %s around the judge: error %v, want a trust refusal", point, err)
		}
	}
}

// Minting a mount authorization needs the kernel API: the judge's service
// hands none out and is not an Invoker agent code could call, and an
// authorization made by hand is refused.
// Seen failing with an Invoke method added to *Judge.
func TestMintingNeedsTheKernelAPI(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	if _, ok := w.judge.(kernel.Invoker); ok {
		t.Fatal("the judge's service is a kernel.Invoker: agent code could call it through cap.invoke")
	}
	authType := reflect.TypeFor[kernel.MountAuthorization]()
	svc := reflect.TypeOf(w.judge)
	for i := range svc.NumMethod() {
		m := svc.Method(i)
		for o := range m.Type.NumOut() {
			if m.Type.Out(o) == authType {
				t.Fatalf("method %s returns a MountAuthorization", m.Name)
			}
		}
	}
	m := manifest("agent.forged")
	code := toolCode("x")
	forged := kernel.MountAuthorization{PluginID: m.ID, Version: m.Version, CodeHash: kernel.HashCode([]byte(code)), Nonce: strings.Repeat("0", 32)}
	err := w.k.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: []byte(code), Auth: forged})
	if kernel.CodeOf(err) != kernel.CodeAuthorization {
		t.Fatalf("forged authorization: error %v, want code %s", err, kernel.CodeAuthorization)
	}
}

// System ids are reserved: the manifest gate wants the agent. prefix, the
// trust gate refuses a system plugin's id, and the kernel refuses it too.
// Seen failing with the agent. prefix check removed from checkManifest.
func TestSystemIDsAreReserved(t *testing.T) {
	sysAgent := kernel.Plugin{Manifest: kernel.Manifest{ID: "agent.sys", Version: "1"}}
	w := newWorld(t, inProcess(), judge.Options{}, sysAgent)
	wantVerdict(t, w.submit(t, manifest(judge.ID), toolCode("x")), expect{judge.StatusRejected, judge.GateManifest, "must start with"})
	wantVerdict(t, w.submit(t, manifest("agent.sys"), toolCode("x")), expect{judge.StatusRejected, judge.GateTrust, "belongs to a system plugin"})
	if err := propose(w.k, manifest(judge.ID), toolCode("x")); kernel.CodeOf(err) != kernel.CodeReservedID {
		t.Fatalf("proposing the judge's id: error %v, want code %s", err, kernel.CodeReservedID)
	}
}

// The judge fails closed: a gate that errors, panics or never returns
// refuses the plugin, naming the gate.
// Seen failing with the recover and the timeout removed from runChecked.
func TestGatesFailClosed(t *testing.T) {
	checks := map[string]func(context.Context, *judge.Submission) error{
		"erring":   func(context.Context, *judge.Submission) error { return context.DeadlineExceeded },
		"panicing": func(context.Context, *judge.Submission) error { panic("gate bug") },
		"blocking": func(context.Context, *judge.Submission) error { select {} },
	}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			gate := kernel.Plugin{
				Manifest: kernel.Manifest{ID: "sys.gate", Version: "1", Inject: []string{judge.Key}},
				Activate: func(_ context.Context, c *kernel.Context) error {
					_, err := c.Contribute(judge.GatePoint, judge.Gate{Name: name, Check: check})
					return err
				},
			}
			w := newWorld(t, inProcess(), judge.Options{GateTimeout: 200 * time.Millisecond}, gate)
			v := w.submit(t, manifest("agent.x"), toolCode("x"))
			if v.Status != judge.StatusRejected || v.Gate != name {
				t.Fatalf("verdict = %+v, want rejected by gate %s", v, name)
			}
		})
	}
}

// Gate and invariant items that are not the judge's types are refused by
// the points' validators.
func TestPointsValidateTheirItems(t *testing.T) {
	bad := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.bad", Version: "1", Inject: []string{judge.Key}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			_, err := c.Contribute(judge.GatePoint, map[string]any{"name": "not a gate"})
			return err
		},
	}
	w := newWorld(t, inProcess(), judge.Options{}, bad)
	if v, _ := w.k.Fiber("sys.bad"); v.State != kernel.StateFailed || !strings.Contains(v.Error, "judge.Gate") {
		t.Fatalf("fiber = %+v, want failed by the gate point's validator", v)
	}
}
