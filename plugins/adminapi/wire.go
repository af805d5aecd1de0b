package adminapi

import (
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// This file is the one place the kernel's, the judge's and the other
// plugins' views become the admin API's wire types (adminv1): every
// answer encodes only what these functions return. A nil list stays nil,
// so each answer encodes as it did before the conversion.

func wireFiber(f kernel.FiberView) adminv1.Fiber {
	return adminv1.Fiber{ID: f.ID, Version: f.Version, Description: f.Description, Trust: wireTrust(f.Trust),
		Enabled: f.Enabled, State: adminv1.FiberState(f.State), Error: f.Error, CodeHash: f.CodeHash, Staged: f.Staged,
		Points: f.Points, Inject: wireDeps(f.Inject), Optional: wireDeps(f.Optional), Provides: f.Provides,
		Scopes: f.Scopes, Effects: f.Effects, Held: f.Held, RequestedBy: f.RequestedBy, Quarantine: f.Quarantine,
		SafeMode: f.SafeMode, Capabilities: f.Capabilities}
}

func wireFibers(in []kernel.FiberView) []adminv1.Fiber {
	if in == nil {
		return nil
	}
	out := make([]adminv1.Fiber, 0, len(in))
	for _, f := range in {
		out = append(out, wireFiber(f))
	}
	return out
}

func wireDeps(in []kernel.Dependency) []adminv1.Dependency {
	if in == nil {
		return nil
	}
	out := make([]adminv1.Dependency, 0, len(in))
	for _, d := range in {
		out = append(out, adminv1.Dependency(d))
	}
	return out
}

// wireTrust names a trust tier; an unknown tier (which the kernel never
// reports) keeps the kernel's name for it.
func wireTrust(t kernel.Trust) adminv1.Trust { return adminv1.Trust(t.String()) }

// wireManifest converts field for field: the two types have the same
// fields, so a field added to one and not the other fails to compile.
func wireManifest(m kernel.Manifest) adminv1.Manifest { return adminv1.Manifest(m) }

func wireVerdict(v judge.Verdict) adminv1.Verdict {
	return adminv1.Verdict{Status: adminv1.Status(v.Status), PluginID: v.PluginID, Version: v.Version,
		CodeHash: v.CodeHash, Gate: v.Gate, Reason: v.Reason, ApprovalID: v.ApprovalID,
		RolledBack: v.RolledBack, Restored: v.Restored, Retry: v.Retry}
}

func wireApproval(a judge.Approval) adminv1.Approval {
	m := wireManifest(a.Manifest)
	return adminv1.Approval{ID: a.ID, PluginID: a.PluginID, Version: a.Version, CodeHash: a.CodeHash,
		Manifest: m, Code: a.Code, RequestedBy: a.RequestedBy, Reasons: a.Reasons,
		Requested: a.Requested, Capabilities: a.Capabilities, Grant: a.Grant, Declaration: adminv1.DeclarationOf(m),
		Decisions: wireDecisions(a.Decisions), Replaces: wireReplaced(a.Replaces, m)}
}

func wireDecisions(in []judge.Decision) []adminv1.ApprovalDecision {
	if in == nil {
		return nil
	}
	out := make([]adminv1.ApprovalDecision, 0, len(in))
	for _, d := range in {
		out = append(out, adminv1.ApprovalDecision(d))
	}
	return out
}

// wireReplaced adds to the version an approval replaces its declaration
// and what the new manifest m changes from it.
func wireReplaced(r *judge.Replaced, m adminv1.Manifest) *adminv1.Replaced {
	if r == nil {
		return nil
	}
	old := wireManifest(r.Manifest)
	out := &adminv1.Replaced{Version: r.Version, CodeHash: r.CodeHash, Manifest: old, CodeDiff: r.CodeDiff, Note: r.Note,
		Declaration: adminv1.DeclarationOf(old)}
	out.Added, out.Removed = adminv1.DeclarationOf(m).Changes(out.Declaration)
	return out
}

// located adds to each approval where the operator asks about it, when
// the kernel runs for a Tenant.
func (a *admin) located(in []adminv1.Approval) []adminv1.Approval {
	if a.opts.Tenant == nil {
		return in
	}
	for i := range in {
		in[i].Object = adminv1.NewApprovalObject(*a.opts.Tenant, in[i].ID)
	}
	return in
}

func wireApprovals(in []judge.Approval) []adminv1.Approval {
	if in == nil {
		return nil
	}
	out := make([]adminv1.Approval, 0, len(in))
	for _, a := range in {
		out = append(out, wireApproval(a))
	}
	return out
}

// wireEvents answers an empty page as [], never null.
func wireEvents(in []kernel.Event) []adminv1.Event {
	out := make([]adminv1.Event, 0, len(in))
	for _, e := range in {
		out = append(out, adminv1.Event(e))
	}
	return out
}

func wireRoutes(in []smshttp.RouteInfo) []adminv1.Route {
	if in == nil {
		return nil
	}
	out := make([]adminv1.Route, 0, len(in))
	for _, r := range in {
		out = append(out, adminv1.Route{Method: r.Method, Path: r.Path, Plugin: r.Plugin, Scope: string(r.Scope)})
	}
	return out
}

func wireCollections(in []collections.Collection) []adminv1.Collection {
	if in == nil {
		return nil
	}
	out := make([]adminv1.Collection, 0, len(in))
	for _, c := range in {
		w := adminv1.Collection{Name: c.Name, Public: c.Public}
		if c.Fields != nil {
			w.Fields = make([]adminv1.Field, 0, len(c.Fields))
		}
		for _, f := range c.Fields {
			w.Fields = append(w.Fields, adminv1.Field{Name: f.Name, Type: string(f.Type), Required: f.Required, Default: f.Default})
		}
		out = append(out, w)
	}
	return out
}

func wireCatalog(c kernel.Catalog) adminv1.Catalog {
	out := adminv1.Catalog{Keys: make([]adminv1.CatalogKey, 0, len(c.Keys)), Points: make([]adminv1.CatalogPoint, 0, len(c.Points))}
	for _, k := range c.Keys {
		out.Keys = append(out.Keys, adminv1.CatalogKey{Name: k.Name, Defined: k.Defined, Definer: k.Definer, Provider: k.Provider,
			Meta: adminv1.KeyMeta{Description: k.Meta.Description, MinProviderTrust: wireTrust(k.Meta.MinProviderTrust),
				MinConsumerTrust: wireTrust(k.Meta.MinConsumerTrust), Requires: k.Meta.Requires, Methods: k.Meta.Methods,
				ProviderRequires: k.Meta.ProviderRequires, Reaches: k.Meta.Reaches}})
	}
	for _, p := range c.Points {
		out.Points = append(out.Points, adminv1.CatalogPoint{Name: p.Name, Definer: p.Definer, Contributions: p.Contributions,
			Meta: adminv1.PointMeta{Description: p.Meta.Description, MinContributorTrust: wireTrust(p.Meta.MinContributorTrust),
				Requires: p.Meta.Requires}})
	}
	return out
}

func wireStep(s agentloop.Step) adminv1.ChatStep {
	return adminv1.ChatStep{ID: s.ID, Tool: s.Tool, Input: s.Input, Result: s.Result, IsError: s.IsError}
}

func wireReply(r agentloop.Reply) adminv1.ChatReply {
	out := adminv1.ChatReply{Reply: r.Reply}
	if r.Steps != nil {
		out.Steps = make([]adminv1.ChatStep, 0, len(r.Steps))
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, wireStep(s))
	}
	out.Halt = wireHalt(r.Halt)
	return out
}

func wireHalt(h *contracts.BudgetHalt) *adminv1.BudgetHalt {
	if h == nil {
		return nil
	}
	return &adminv1.BudgetHalt{Reason: h.Reason, Detail: h.Detail}
}

func wireChatEvent(e agentloop.Event) adminv1.ChatEvent {
	out := adminv1.ChatEvent{Type: e.Type, Text: e.Text, Error: e.Error, Halt: wireHalt(e.Halt)}
	if e.Step != nil {
		s := wireStep(*e.Step)
		out.Step = &s
	}
	if e.Verdict != nil {
		v := wireVerdict(*e.Verdict)
		out.Verdict = &v
	}
	if e.Reply != nil {
		r := wireReply(*e.Reply)
		out.Reply = &r
	}
	return out
}

// answer is a 200 JSON answer of v, which is an adminv1 type.
func answer(v any) *smshttp.Response {
	r := smshttp.JSON(v)
	r.Headers = versionHeaders()
	return r
}

// versionHeaders name the admin API version of an answer.
func versionHeaders() map[string]string {
	return adminv1.VersionHeaders()
}
