package adminapi

import (
	"context"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// exportPage is how many events one read of the log returns.
const exportPage = 1000

// export answers an installed agent plugin's manifest and code, folded
// from the event log and the blob store (the kernel's source of truth).
func (a *admin) export(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	var all []kernel.Event
	for after := int64(0); ; {
		page, err := a.k.Events(ctx, after, exportPage)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < exportPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	target, err := kernel.FoldTarget(all)
	if err != nil {
		return nil, err
	}
	t, ok := target[id]
	if !ok || !t.Installed || t.Trust != kernel.TrustAgent {
		return nil, smshttp.NewError(smshttp.KindNotFound, "no agent plugin "+id+" is installed")
	}
	code, err := a.k.Code(ctx, t.CodeHash)
	if err != nil {
		return nil, err
	}
	return answer(adminv1.Installed{Manifest: wireManifest(t.Manifest), Code: string(code), CodeHash: t.CodeHash, Enabled: t.Enabled}), nil
}

// status answers one plugin's fiber and pending approvals; an id the
// kernel neither runs nor holds for approval is a 404.
func (a *admin) status(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	out := adminv1.PluginStatus{Pending: []adminv1.Approval{}}
	if f, ok := a.k.Fiber(id); ok {
		w := wireFiber(f)
		out.Fiber = &w
	}
	for _, p := range a.judge.Pending() {
		if p.PluginID == id {
			out.Pending = append(out.Pending, a.located([]adminv1.Approval{wireApproval(p)})...)
		}
	}
	if out.Fiber == nil && len(out.Pending) == 0 {
		return nil, smshttp.NewError(smshttp.KindNotFound, "the kernel neither runs nor holds plugin "+id)
	}
	return answer(out), nil
}
