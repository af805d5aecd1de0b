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

// scope is what a count belongs to: the tenant, a user or a plugin. It is
// written "tenant", "user:<name>" and "plugin:<id>".
type scope struct {
	kind string // "tenant", "user" or "plugin"
	name string
}

var tenantScope = scope{kind: "tenant"}

func (s scope) String() string {
	if s.kind == "tenant" {
		return s.kind
	}
	return s.kind + ":" + s.name
}

// parseScope reads a scope as String writes it.
func parseScope(v string) scope {
	kind, name, _ := strings.Cut(v, ":")
	return scope{kind: kind, name: name}
}

// chain is the scopes a use counts against, narrowest first: a plugin,
// its user, the tenant. An array, so counting allocates nothing.
type chain struct {
	scopes [3]scope
	n      int
}

func chainOf(plugin, user string) chain {
	var c chain
	if plugin != "" {
		c.scopes[c.n] = scope{kind: "plugin", name: plugin}
		c.n++
	}
	if user != "" {
		c.scopes[c.n] = scope{kind: "user", name: user}
		c.n++
	}
	c.scopes[c.n] = tenantScope
	c.n++
	return c
}

func (c *chain) all() []scope { return c.scopes[:c.n] }

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
	ends   time.Time                 // when period ends
	used   map[scope]contracts.Usage // use in period, stored and not
	dirty  map[string]map[scope]contracts.Usage
	nanos  map[scope]time.Duration // wall time under a millisecond, not yet counted
	held   map[scope]int64         // money held by steps handed out and not yet recorded (hold.go); of no period
	warned map[string]bool         // period|scope|limit: EventExceeded recorded
	k      *kernel.Kernel          // set by the plugin's activation
	loaded map[string]bool         // periods read from the database
	stop   func() error            // stops the writes the activation started
}

// NewMeter returns a Meter for cfg, which must be valid. now is the clock
// periods are read from; nil is time.Now.
func NewMeter(cfg Config, now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	return &Meter{cfg: cfg, now: now, used: map[scope]contracts.Usage{}, dirty: map[string]map[scope]contracts.Usage{},
		nanos: map[scope]time.Duration{}, held: map[scope]int64{}, warned: map[string]bool{}, loaded: map[string]bool{}}
}

var _ kernel.Meter = (*Meter)(nil)

// Admit refuses a call into p's code, or a service call it makes, when the
// plugin, the user who asked for it or the tenant reached a limit.
func (m *Meter) Admit(ctx context.Context, p kernel.Payer) error {
	c := chainOf(p.Plugin, p.RequestedBy)
	return m.check(ctx, &c, p.Plugin, dimensions)
}

// Spent counts what p's code used against the plugin, its user and the
// tenant.
//
// A call made during another agent call (kernel.PluginOf(ctx) names the
// outer plugin) is inside that call's wall time, which its user and the
// tenant pay: its own time counts against its plugin only, and not at all
// when the outer call is its own plugin's.
func (m *Meter) Spent(ctx context.Context, p kernel.Payer, use kernel.Use) {
	c := chainOf(p.Plugin, p.RequestedBy)
	if outer := kernel.PluginOf(ctx); outer != "" && use.Wall > 0 {
		if outer == p.Plugin {
			return
		}
		c = chainOf(p.Plugin, "")
		c.n = 1 // the plugin alone
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	for _, s := range c.all() {
		wall := m.nanos[s] + use.Wall
		m.nanos[s] = wall % time.Millisecond
		m.chargeLocked(s, contracts.Usage{WallMillis: int64(wall / time.Millisecond), Rows: use.Rows})
	}
}

func (m *Meter) chargeLocked(s scope, u contracts.Usage) {
	if u == (contracts.Usage{}) {
		return
	}
	m.used[s] = add(m.used[s], u)
	d := m.dirty[m.period]
	if d == nil {
		d = map[scope]contracts.Usage{}
		m.dirty[m.period] = d
	}
	d[s] = add(d[s], u)
}

func (m *Meter) limitOf(s scope) contracts.Usage {
	switch s.kind {
	case "tenant":
		return m.cfg.Limits.Tenant
	case "user":
		return m.cfg.Limits.User
	}
	return m.cfg.Limits.Plugin
}

// check returns a *contracts.BudgetHalt for the first scope of c that
// reached a limit in one of dims, recording EventExceeded the first time
// in the period. The event is appended from a goroutine: Admit may run
// inside a transaction holding the database's only connection (SQLite)
// that the event log needs too.
func (m *Meter) check(ctx context.Context, c *chain, plugin string, dims []dimension) error {
	m.mu.Lock()
	m.roll()
	var ex *Exceeded
	var words string
	for _, s := range c.all() {
		if d, ok := over(m.used[s], m.limitOf(s), dims); ok {
			ex = &Exceeded{Period: m.period, Scope: s.String(), Limit: d.field, Used: d.of(m.used[s]), Max: d.of(m.limitOf(s)), Plugin: plugin}
			words = d.words
			break
		}
	}
	if ex == nil {
		m.mu.Unlock()
		return nil
	}
	key := ex.Period + "|" + ex.Scope + "|" + ex.Limit
	first := !m.warned[key]
	m.warned[key] = true
	k := m.k
	m.mu.Unlock()
	if first && k != nil { // once per scope, limit and period: at most a few goroutines
		go func() { _ = k.Record(context.WithoutCancel(ctx), EventExceeded, PluginID, ex) }()
	}
	return &contracts.BudgetHalt{Reason: "limit_reached", Detail: fmt.Sprintf(
		"%s used %d of its %d %s in period %s; its agent work is refused until the period ends or the limit is raised",
		ex.Scope, ex.Used, ex.Max, words, ex.Period)}
}

// roll starts a new period when the clock passed into one; the caller
// holds mu.
func (m *Meter) roll() {
	now := m.now()
	if now.Before(m.ends) {
		return
	}
	p := m.cfg.periodOf(now)
	if m.period != "" && p != m.period {
		m.loaded[p] = true // a period this process saw begin has nothing stored from before
	}
	if p != m.period { // the maps of the period that ended go: memory stays bounded by one period's scopes
		m.used = map[scope]contracts.Usage{}
		m.nanos = map[scope]time.Duration{}
		m.warned = map[string]bool{}
		m.loaded = map[string]bool{p: m.loaded[p]}
	}
	m.period, m.ends = p, m.cfg.endOf(now)
}

// Report returns the limits and the current period's use.
func (m *Meter) Report() contracts.BudgetReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	r := contracts.BudgetReport{Period: m.period, Currency: m.cfg.currency(), Limits: m.cfg.Limits,
		Tenant: m.used[tenantScope], Users: map[string]contracts.Usage{}, Plugins: map[string]contracts.Usage{}}
	for s, u := range m.used {
		switch s.kind {
		case "user":
			r.Users[s.name] = u
		case "plugin":
			r.Plugins[s.name] = u
		}
	}
	return r
}

// firstHalt reports whether agent work of agent for user halted for
// reason for the first time in the period.
func (m *Meter) firstHalt(agent, user, reason string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	key := "halt|" + agent + "|" + user + "|" + reason
	first := !m.warned[key]
	m.warned[key] = true
	return first
}

// moneyLeft is the least money user and the tenant have left in the
// current period, or unlimitedCeiling when neither has a cost limit.
func (m *Meter) moneyLeft(user string) (int64, string) {
	c := chainOf("", user)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	left := int64(unlimitedCeiling)
	for _, s := range c.all() {
		if l := m.limitOf(s).CostMinor; l > 0 {
			left = min(left, l-m.used[s].CostMinor)
		}
	}
	return left, m.period
}
