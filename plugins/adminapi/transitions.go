package adminapi

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

func (a *admin) transitionRoutes(route func(method, path string, scope smshttp.Scope, h smshttp.Handler) smshttp.Route) []smshttp.Route {
	return []smshttp.Route{
		route("GET", adminv1.RouteTransitions, smshttp.ScopeRead, func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return answer(adminv1.Transitions{Transitions: wireTransitions(a.k.Transitions())}), nil
		}),
		route("GET", adminv1.RoutePluginTransition, smshttp.ScopeRead, a.transition),
		route("POST", adminv1.RouteTransitionAbort, smshttp.ScopeAdmin, a.abortTransition),
	}
}

func (a *admin) transition(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	t, ok := a.k.Transition(id)
	if !ok {
		return nil, smshttp.NewError(smshttp.KindNotFound, fmt.Sprintf("%s has had no transition since the kernel started", id))
	}
	return answer(wireTransition(t)), nil
}

// abortTransition aborts a plugin's open transition, naming who did it as
// the reason the log records.
func (a *admin) abortTransition(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	who := smshttp.PrincipalFrom(ctx)
	by := "anonymous"
	if who.Authenticated {
		by = who.Name
	}
	if _, err := a.k.AbortTransition(ctx, id, "aborted by "+by); err != nil && kernel.CodeOf(err) != kernel.CodeActivation {
		return nil, err // an error of the version put back shows in its view, not as the request's
	}
	t, _ := a.k.Transition(id)
	return answer(wireTransition(t)), nil
}

func wireTransition(t kernel.TransitionView) adminv1.Transition {
	return adminv1.Transition{Plugin: t.Plugin, FromVersion: t.FromVersion, From: t.From, ToVersion: t.ToVersion, To: t.To,
		Phase: t.Phase, Began: t.Began, Ended: t.Ended, Switched: t.Switched, Committed: t.Committed,
		Draining: t.Draining, InFlight: t.InFlight, Reason: t.Reason}
}

func wireTransitions(in []kernel.TransitionView) []adminv1.Transition {
	out := make([]adminv1.Transition, 0, len(in))
	for _, t := range in {
		out = append(out, wireTransition(t))
	}
	return out
}
