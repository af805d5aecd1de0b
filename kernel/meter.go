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
	// Admit is asked before a call into plugin's code, and before each
	// service call (invoke) its code makes. An error refuses the call with
	// CodeBudget and its message; nothing else is refused.
	Admit(ctx context.Context, plugin string) error
	// Spent reports what plugin's code used: the wall time of a call into
	// it (including the service calls it made), or rows a service wrote on
	// its behalf (Kernel.Spend).
	Spent(ctx context.Context, plugin string, use Use)
}

// Use is what agent code used of the host.
type Use struct {
	// Wall is time spent in a call into the plugin's code.
	Wall time.Duration
	// Rows is how many rows a service wrote for the plugin.
	Rows int64
}

type pluginKey struct{}

// withPlugin returns ctx saying that plugin's code made the service call
// running under it.
func withPlugin(ctx context.Context, plugin string) context.Context {
	return context.WithValue(ctx, pluginKey{}, plugin)
}

// PluginOf returns the agent plugin whose code made the service call ctx
// belongs to, or "" outside one. Services use it to account what they do
// for agent code (Kernel.Spend).
func PluginOf(ctx context.Context) string {
	p, _ := ctx.Value(pluginKey{}).(string)
	return p
}

// Spend charges use to the agent plugin whose service call ctx belongs to
// (PluginOf), through the kernel's Meter. Outside an agent plugin's call,
// or without a Meter, it does nothing. A service calls it after a write
// succeeds, with the rows it wrote.
func (k *Kernel) Spend(ctx context.Context, use Use) {
	if p := PluginOf(ctx); p != "" && k.meter != nil {
		k.meter.Spent(ctx, p, use)
	}
}

// admit asks the Meter whether f's code may run a call, as a kernel error.
func (k *Kernel) admit(ctx context.Context, op string, f *fiber) error {
	if k.meter == nil {
		return nil
	}
	if err := k.meter.Admit(ctx, f.id); err != nil {
		return k.errf(CodeBudget, op, f.id, err.Error())
	}
	return nil
}

// spent tells the Meter how long a call into f's code took.
func (k *Kernel) spent(ctx context.Context, f *fiber, start time.Time) {
	if k.meter != nil {
		k.meter.Spent(ctx, f.id, Use{Wall: time.Since(start)})
	}
}
