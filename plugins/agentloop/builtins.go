package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Names of the built-in tools.
const (
	toolDefine  = "plugin_define"
	toolList    = "plugin_list"
	toolDisable = "plugin_disable"
	toolEnable  = "plugin_enable"
	toolRemove  = "plugin_uninstall"
)

func builtin(name string) bool {
	switch name {
	case toolDefine, toolList, toolDisable, toolEnable, toolRemove:
		return true
	}
	return false
}

const idSchema = `{"type":"object","properties":{"id":{"type":"string","description":"the plugin id (agent.*)"}},"required":["id"]}`

// builtins returns the built-in tools.
func (s *service) builtins() []Tool {
	return []Tool{
		{Name: toolDefine, Description: "Submit an agent plugin to the judge: {manifest, code}. The manifest declares what the plugin may do: the keys it reads (inject), the points it contributes to (points) and the capabilities it uses beyond them (scopes: db.write to create, write or delete records through orm-user or collections); the judge refuses a plugin that needs more than the user may grant. Returns the judge's verdict: mounted, pending approval, or rejected with the failing gate.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"manifest":{"type":"object"},"code":{"type":"string"}},"required":["manifest","code"]}`),
			Handler:     s.submit},
		{Name: toolList, Description: "List the installed plugins with their state.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), Handler: s.list},
		{Name: toolDisable, Description: "Disable an agent plugin.", InputSchema: json.RawMessage(idSchema), Handler: s.toggle(false)},
		{Name: toolEnable, Description: "Enable an agent plugin.", InputSchema: json.RawMessage(idSchema), Handler: s.toggle(true)},
		{Name: toolRemove, Description: "Uninstall an agent plugin: it stops, and its effects are undone.", InputSchema: json.RawMessage(idSchema), Handler: s.uninstall},
	}
}

// submit is plugin_define: the plugin goes to the judge, the verdict back
// to the model. A plugin an admin disabled is not defined anew (its code
// replaced) for a caller without the admin scope; for one with it, the new
// version stays disabled until an admin enables it (kernel.Propose).
func (s *service) submit(ctx context.Context, input map[string]any) (any, error) {
	c := callerOf(ctx)
	if err := c.allow(toolDefine); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("encode the plugin: %w", err)
	}
	p, err := judge.DecodePlugin(raw)
	if err != nil {
		return nil, err
	}
	if err := s.allowHeld(c, toolDefine, p.Manifest.ID); err != nil {
		return nil, err
	}
	return s.judge.Submit(ctx, p.Manifest, p.Code, c.requester())
}

// pluginInfo is one row of plugin_list.
type pluginInfo struct {
	ID      string       `json:"id"`
	Version string       `json:"version"`
	Trust   kernel.Trust `json:"trust"`
	Enabled bool         `json:"enabled"`
	State   kernel.State `json:"state"`
	Error   string       `json:"error,omitempty"`
}

func (s *service) list(ctx context.Context, _ map[string]any) (any, error) {
	if err := callerOf(ctx).allow(toolList); err != nil {
		return nil, err
	}
	var out []pluginInfo
	for _, f := range s.k.Fibers() {
		out = append(out, pluginInfo{ID: f.ID, Version: f.Version, Trust: f.Trust, Enabled: f.Enabled, State: f.State, Error: f.Error})
	}
	return out, nil
}

// uninstall is plugin_uninstall: an agent plugin leaves the kernel.
func (s *service) uninstall(ctx context.Context, input map[string]any) (any, error) {
	c := callerOf(ctx)
	id, _ := input["id"].(string)
	if err := c.allow(toolRemove); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(id, judge.AgentPrefix) {
		return nil, fmt.Errorf("only agent plugins (%s*) can be uninstalled here", judge.AgentPrefix)
	}
	if err := s.allowHeld(c, toolRemove, id); err != nil {
		return nil, err
	}
	if err := s.k.Uninstall(ctx, id, false); err != nil {
		return nil, err
	}
	return map[string]any{"id": id, "uninstalled": true}, nil
}

// toggle is plugin_enable and plugin_disable. A caller with the admin
// scope toggles as the admin API does; another one's disable is reversible
// and its enable cannot undo a disable that holds (kernel.EnableReversible).
func (s *service) toggle(enable bool) ToolFunc {
	tool := map[bool]string{true: toolEnable, false: toolDisable}[enable]
	return func(ctx context.Context, input map[string]any) (any, error) {
		c := callerOf(ctx)
		if err := c.allow(tool); err != nil {
			return nil, err
		}
		id, _ := input["id"].(string)
		if !strings.HasPrefix(id, judge.AgentPrefix) {
			return nil, fmt.Errorf("only agent plugins (%s*) can be enabled or disabled here", judge.AgentPrefix)
		}
		if err := s.setEnabled(ctx, c, id, enable); err != nil {
			return nil, err
		}
		v, _ := s.k.Fiber(id)
		return pluginInfo{ID: v.ID, Version: v.Version, Trust: v.Trust, Enabled: v.Enabled, State: v.State, Error: v.Error}, nil
	}
}

func (s *service) setEnabled(ctx context.Context, c caller, id string, enable bool) error {
	admin := c.has(smshttp.ScopeAdmin)
	switch {
	case enable && admin:
		return s.k.Enable(ctx, id)
	case enable:
		return s.k.EnableReversible(ctx, id)
	case admin:
		return s.k.Disable(ctx, id)
	}
	return s.k.DisableReversibly(ctx, id, c.Name)
}
