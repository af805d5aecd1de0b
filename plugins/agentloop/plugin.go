package agentloop

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// defaultIdentity opens the system prompt when Options.Identity is empty.
const defaultIdentity = "You are the operator of a plugin kernel: you answer the user and extend the system by defining plugins through the judge."

// Plugin returns the agent loop plugin. It injects the model and the judge,
// defines Key and the tool and prompt points, and provides the Service.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		// The http plugin is optional: the agent reads the caller (a
		// principal the http plugin put in the turn's context) to act with
		// its rights, and runs without it. So are the budgets: with them
		// every turn is a run of the ledger (budget.go).
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Inject: []string{contracts.ModelKey, judge.Key},
			Optional: []string{smshttp.Key, contracts.BudgetKey}, Provide: []string{Key}, Description: "The chat agent: a model in a tool-use loop"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

// service is one activation of the agent loop.
type service struct {
	k     *kernel.Kernel
	model contracts.ModelService
	judge judge.Service
	opts  Options

	mu       sync.RWMutex
	tools    map[string]owned[Tool]   // by contribution id
	prompts  map[string]owned[Prompt] // by contribution id
	sessions map[string]*session
}

// owned is an item with the order it arrived in.
type owned[T any] struct {
	seq  int
	item T
}

var _ Service = (*service)(nil)

func activate(c *kernel.Context, opts Options) error {
	m, err := kernel.Lookup[contracts.ModelService](c, contracts.ModelKey)
	if err != nil {
		return err
	}
	j, err := kernel.Lookup[judge.Service](c, judge.Key)
	if err != nil {
		return err
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.Identity == "" {
		opts.Identity = defaultIdentity
	}
	api := c.Kernel()
	s := &service{k: api.Kernel, model: m, judge: j, opts: opts,
		tools: map[string]owned[Tool]{}, prompts: map[string]owned[Prompt]{}, sessions: map[string]*session{}}
	if err := s.define(api); err != nil {
		return err
	}
	return c.Provide(Key, Service(s))
}

// define defines the key and both points and observes the points.
func (s *service) define(api *kernel.API) error {
	err := api.DefineKey(Key, kernel.KeyMeta{Description: "the chat agent (agentloop.Service)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem,
		Reaches: []string{contracts.CapPluginInstall, contracts.CapModelComplete}})
	if err != nil {
		return err
	}
	err = api.DefinePoint(ToolPoint, kernel.PointMeta{
		Description: "{name, description, input_schema, handler}: a tool the chat agent may call",
		Requires:    []string{contracts.CapAgentTool},
		Validate:    func(item any) error { _, err := parseTool(item); return err },
	})
	if err != nil {
		return err
	}
	err = api.DefinePoint(PromptPoint, kernel.PointMeta{
		Description: "{section, order, text}: a section of the chat agent's system prompt",
		Requires:    []string{contracts.CapAgentTool},
		Validate:    func(item any) error { _, err := parsePrompt(item); return err },
	})
	if err != nil {
		return err
	}
	seq := 0
	err = api.ObservePoint(ToolPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			if t, err := parseTool(x.Item); err == nil {
				s.mu.Lock()
				seq++
				s.tools[x.ID] = owned[Tool]{seq: seq, item: t}
				s.mu.Unlock()
			}
		},
		Removed: func(x kernel.Contribution) { s.mu.Lock(); delete(s.tools, x.ID); s.mu.Unlock() },
	})
	if err != nil {
		return err
	}
	return api.ObservePoint(PromptPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			if p, err := parsePrompt(x.Item); err == nil {
				s.mu.Lock()
				seq++
				s.prompts[x.ID] = owned[Prompt]{seq: seq, item: p}
				s.mu.Unlock()
			}
		},
		Removed: func(x kernel.Contribution) { s.mu.Lock(); delete(s.prompts, x.ID); s.mu.Unlock() },
	})
}

// system returns the system prompt: the identity line, then the prompt
// sections by order (then arrival).
func (s *service) system() string {
	s.mu.RLock()
	ps := make([]owned[Prompt], 0, len(s.prompts))
	for _, p := range s.prompts {
		ps = append(ps, p)
	}
	s.mu.RUnlock()
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].item.Order != ps[j].item.Order {
			return ps[i].item.Order < ps[j].item.Order
		}
		return ps[i].seq < ps[j].seq
	})
	parts := []string{s.opts.Identity}
	for _, p := range ps {
		parts = append(parts, "## "+p.item.Section+"\n"+p.item.Text)
	}
	return strings.Join(parts, "\n\n")
}

// toolset returns the tools of a model call: the built-ins, then the
// contributed tools in arrival order. A contributed name that repeats an
// earlier one is left out.
func (s *service) toolset() []Tool {
	out := s.builtins()
	s.mu.RLock()
	ts := make([]owned[Tool], 0, len(s.tools))
	for _, t := range s.tools {
		ts = append(ts, t)
	}
	s.mu.RUnlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].seq < ts[j].seq })
	seen := map[string]bool{}
	for _, t := range ts {
		if !seen[t.item.Name] {
			seen[t.item.Name] = true
			out = append(out, t.item)
		}
	}
	return out
}
