package kernel

import (
	"context"
	"time"
)

// Meter accounts what agent code uses of the host, for budgets
// (Options.Meter). The kernel asks it before every call into an agent
// plugin's code and every service call that code makes, and tells it what
// each call used. It must be safe for concurrent use and must not call back
// into the kernel's operations.
type Meter interface {
	// Admit is asked before a call into p's code, and before each service
	// call (invoke) its code makes once it is active. An error refuses the
	// call with CodeBudget and its message; nothing else is refused. An
	// activation is never refused: a plugin over budget activates (and so
	// is never quarantined for it) and has its calls refused.
	Admit(ctx context.Context, p Payer) error
	// Spent reports what p's code used: the wall time of a call into it
	// or of its activation (including the service calls it made), or rows
	// a service wrote on its behalf (Kernel.Spend). A call made during
	// another agent call carries that call's payer in ctx (PluginOf).
	Spent(ctx context.Context, p Payer, use Use)
}

// Payer is the agent plugin whose code used the host, and the person who
// asked for its installed version (FiberView.RequestedBy; empty when no
// one was named).
type Payer struct {
	Plugin, RequestedBy string
}

// Use is what agent code used of the host.
type Use struct {
	// Wall is time spent in a call into the plugin's code.
	Wall time.Duration
	// Rows is how many rows a service wrote for the plugin.
	Rows int64
}

type payerKey struct{}

// withPayer returns ctx saying that p's code made the service call running
// under it.
func withPayer(ctx context.Context, p Payer) context.Context {
	return context.WithValue(ctx, payerKey{}, p)
}

// PluginOf returns the agent plugin whose code made the service call ctx
// belongs to, or "" outside one.
func PluginOf(ctx context.Context) string {
	p, _ := ctx.Value(payerKey{}).(Payer)
	return p.Plugin
}

// Spend charges use to the agent plugin whose service call ctx belongs to
// (PluginOf), through the kernel's Meter. Outside an agent plugin's call,
// or without a Meter, it does nothing. A service calls it after a write
// succeeds, with the rows it wrote.
func (k *Kernel) Spend(ctx context.Context, use Use) {
	if p, ok := ctx.Value(payerKey{}).(Payer); ok && k.meter != nil {
		k.meter.Spent(ctx, p, use)
	}
}

// payer names f and who asked for it.
func (k *Kernel) payer(f *fiber) Payer {
	p, _ := k.payerActive(f)
	return p
}

// payerActive names f and who asked for it, and reports whether f is
// active (not still activating).
func (k *Kernel) payerActive(f *fiber) (Payer, bool) {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return Payer{Plugin: f.id, RequestedBy: f.requestedBy}, f.state == StateActive
}

// admit asks the Meter whether p's code may run a call, as a kernel error.
func (k *Kernel) admit(ctx context.Context, op string, p Payer) error {
	if k.meter == nil {
		return nil
	}
	if err := k.meter.Admit(ctx, p); err != nil {
		return k.errf(CodeBudget, op, p.Plugin, err.Error())
	}
	return nil
}

// spent tells the Meter how long a call into p's code took.
func (k *Kernel) spent(ctx context.Context, p Payer, start time.Time) {
	if k.meter != nil {
		k.meter.Spent(ctx, p, Use{Wall: time.Since(start)})
	}
}

// ActFor starts work a service does on agent plugin id's behalf without
// calling its code: an action the plugin declared, such as an
// automation's write. The Meter admits it as one of the plugin's calls
// (a refusal is CodeBudget), and the rows services write under the
// returned context count against the plugin and who asked for it
// (Spend); done reports the work's wall time, which includes any agent
// code it calls, in full: call it for work that runs on its own (a
// queue, a timer), never inside another agent call. For a system plugin,
// or a kernel without a Meter, ctx comes back as it is and done does
// nothing.
func (k *Kernel) ActFor(ctx context.Context, id string) (_ context.Context, done func(), _ error) {
	k.reg.RLock()
	f := k.fibers[id]
	var p Payer
	agent := f != nil && f.trust == TrustAgent
	if agent {
		p = Payer{Plugin: f.id, RequestedBy: f.requestedBy}
	}
	k.reg.RUnlock()
	if f == nil {
		return ctx, func() {}, k.errf(CodeNotFound, "act", id, "no such plugin")
	}
	if !agent || k.meter == nil {
		return ctx, func() {}, nil
	}
	if err := k.admit(ctx, "act", p); err != nil {
		return ctx, func() {}, err
	}
	start, outside := time.Now(), withPayer(ctx, Payer{}) // not inside a call that pays for it: the work runs on its own
	return withPayer(ctx, p), func() { k.spent(outside, p, start) }, nil
}
