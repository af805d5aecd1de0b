package budget

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Events the budget records.
const (
	// EventExceeded is recorded the first time in a period that a scope's
	// use reaches one of its limits and a call is refused for it.
	EventExceeded = "budget/exceeded"
	// EventHalted is recorded when agent work halts for its budget.
	EventHalted = "budget/halted"
)

// Scopes are named "tenant", "user:<name>" and "plugin:<id>".
const tenantScope = "tenant"

func userScope(name string) string { return "user:" + name }
func pluginScope(id string) string { return "plugin:" + id }

// Exceeded is the data of an EventExceeded event.
type Exceeded struct {
	Period string `json:"period"`
	Scope  string `json:"scope"`
	Limit  string `json:"limit"`
	Used   int64  `json:"used"`
	Max    int64  `json:"max"`
	Plugin string `json:"plugin,omitempty"`
}

// Meter counts what agent work uses in the current period and refuses work
// past a limit. It is the kernel's kernel.Meter; make it with NewMeter,
// pass it to kernel.Options.Meter and to Plugin, which attaches the
// tenant's database and the kernel's log to it.
type Meter struct {
	cfg Config
	now func() time.Time

	mu     sync.Mutex
	period string
	used   map[string]contracts.Usage // scope -> use in period, stored and not
	dirty  map[string]map[string]contracts.Usage
	nanos  map[string]time.Duration // scope -> wall time under a millisecond, not yet counted
	warned map[string]bool          // period|scope|limit: EventExceeded recorded
	k      *kernel.Kernel           // set by the plugin's activation
	loaded map[string]bool          // periods read from the database
	stop   func() error             // stops the writes the activation started
}

// NewMeter returns a Meter for cfg, which must be valid. now is the clock
// periods are read from; nil is time.Now.
func NewMeter(cfg Config, now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	return &Meter{cfg: cfg, now: now, used: map[string]contracts.Usage{}, dirty: map[string]map[string]contracts.Usage{},
		nanos: map[string]time.Duration{}, warned: map[string]bool{}, loaded: map[string]bool{}}
}

var _ kernel.Meter = (*Meter)(nil)

// Admit refuses a call into p's code, or a service call it makes, when the
// plugin, the user who asked for it or the tenant reached a limit.
func (m *Meter) Admit(ctx context.Context, p kernel.Payer) error {
	return m.check(ctx, m.chain(p.Plugin, p.RequestedBy), p.Plugin)
}

// Spent counts what p's code used against the plugin, its user and the
// tenant.
func (m *Meter) Spent(_ context.Context, p kernel.Payer, use kernel.Use) {
	scopes := m.chain(p.Plugin, p.RequestedBy)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	for _, s := range scopes {
		wall := m.nanos[s] + use.Wall
		m.nanos[s] = wall % time.Millisecond
		m.chargeLocked(s, contracts.Usage{WallMillis: int64(wall / time.Millisecond), Rows: use.Rows})
	}
}

// charge counts u against the user and the tenant.
func (m *Meter) charge(user string, u contracts.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	for _, s := range m.chain("", user) {
		m.chargeLocked(s, u)
	}
}

func (m *Meter) chargeLocked(scope string, u contracts.Usage) {
	if u == (contracts.Usage{}) {
		return
	}
	m.used[scope] = add(m.used[scope], u)
	d := m.dirty[m.period]
	if d == nil {
		d = map[string]contracts.Usage{}
		m.dirty[m.period] = d
	}
	d[scope] = add(d[scope], u)
}

// chain returns the scopes a plugin's or a user's use counts against,
// narrowest first.
func (m *Meter) chain(plugin, user string) []string {
	var scopes []string
	if plugin != "" {
		scopes = append(scopes, pluginScope(plugin))
	}
	if user != "" {
		scopes = append(scopes, userScope(user))
	}
	return append(scopes, tenantScope)
}

func (m *Meter) limitOf(scope string) contracts.Usage {
	switch {
	case scope == tenantScope:
		return m.cfg.Limits.Tenant
	case strings.HasPrefix(scope, "user:"):
		return m.cfg.Limits.User
	}
	return m.cfg.Limits.Plugin
}

// check returns a *contracts.BudgetHalt for the first scope that reached
// a limit, recording EventExceeded the first time in the period.
func (m *Meter) check(ctx context.Context, scopes []string, plugin string) error {
	m.mu.Lock()
	m.roll()
	var ex *Exceeded
	var detail string
	for _, s := range scopes {
		if d, ok := over(m.used[s], m.limitOf(s)); ok {
			ex = &Exceeded{Period: m.period, Scope: s, Limit: d.field, Used: d.of(m.used[s]), Max: d.of(m.limitOf(s)), Plugin: plugin}
			detail = fmt.Sprintf("%s used %d of its %d %s in period %s; its agent work is refused until the period ends or the limit is raised",
				s, ex.Used, ex.Max, d.words, m.period)
			break
		}
	}
	first := ex != nil && !m.warned[ex.Period+"|"+ex.Scope+"|"+ex.Limit]
	if first {
		m.warned[ex.Period+"|"+ex.Scope+"|"+ex.Limit] = true
	}
	k := m.k
	m.mu.Unlock()
	if ex == nil {
		return nil
	}
	if first && k != nil {
		_ = k.Record(context.WithoutCancel(ctx), EventExceeded, PluginID, ex)
	}
	return &contracts.BudgetHalt{Reason: "limit_reached", Detail: detail}
}

// roll starts a new period when the clock passed into one; the caller
// holds mu.
func (m *Meter) roll() {
	if p := m.cfg.periodOf(m.now()); p != m.period {
		if m.period != "" {
			m.loaded[p] = true // a period this process saw begin has nothing stored from before
		}
		m.period = p
		m.used = map[string]contracts.Usage{}
		m.nanos = map[string]time.Duration{}
	}
}

// report returns the limits and the period's use.
func (m *Meter) report() contracts.BudgetReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	r := contracts.BudgetReport{Period: m.period, Currency: m.cfg.currency(), Limits: m.cfg.Limits,
		Tenant: m.used[tenantScope], Users: map[string]contracts.Usage{}, Plugins: map[string]contracts.Usage{}}
	for s, u := range m.used {
		if name, ok := strings.CutPrefix(s, "user:"); ok {
			r.Users[name] = u
		} else if name, ok := strings.CutPrefix(s, "plugin:"); ok {
			r.Plugins[name] = u
		}
	}
	return r
}
