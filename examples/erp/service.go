package erp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/agentloop"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// ServicePluginID is the plugin serving the summary route and tool.
const ServicePluginID = "erp.service"

// RouteSummary answers the caller's invoices counted by state.
const RouteSummary = "/api/erp/summary"

// ToolSummary is the agent's tool answering the same as RouteSummary.
const ToolSummary = "invoice_summary"

// Summary is the caller's invoices counted by state.
type Summary struct {
	Invoices int64            `json:"invoices"`
	ByState  map[string]int64 `json:"byState"`
}

// summarize counts the invoices ctx's user may read, by state.
func summarize(ctx context.Context, svc orm.Service) (Summary, error) {
	groups, err := svc.ReadGroup(ctx, Invoice, orm.GroupRequest{GroupBy: []string{"state"}})
	if err != nil {
		return Summary{}, err
	}
	s := Summary{ByState: map[string]int64{}}
	for _, g := range groups {
		state, _ := g["state"].(string)
		n, _ := g["count"].(int64)
		s.ByState[state] = n
		s.Invoices += n
	}
	return s, nil
}

// servicePlugin serves RouteSummary to every signed-in user (and read
// credentials), and gives the agent ToolSummary when the kernel has one.
// Both act as their caller: the route as the request's user, the tool as
// the user the chat turn serves, so each sees only what rbac lets them.
func servicePlugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ServicePluginID, Version: "1", Description: "The invoice summary, as a route and a tool",
			Inject: []string{orm.Key, smshttp.Key}, Points: []string{smshttp.RoutePoint}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			svc, err := kernel.Lookup[orm.Service](c, orm.Key)
			if err != nil {
				return err
			}
			route := smshttp.Route{Method: http.MethodGet, Path: RouteSummary, Scope: smshttp.ScopeRead, Users: true,
				Handler: func(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
					s, err := summarize(ctx, svc)
					if err != nil {
						return nil, err
					}
					return smshttp.JSON(s), nil
				}}
			if _, err := c.Contribute(smshttp.RoutePoint, route); err != nil {
				return err
			}
			if !c.Kernel().Has(agentloop.Key) {
				return nil // no model, no agent: nothing to give a tool to
			}
			_, err = c.Contribute(agentloop.ToolPoint, agentloop.Tool{Name: ToolSummary,
				Description: "Count the invoices the user may see, by state (draft, posted, paid)",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
				Handler: func(ctx context.Context, _ map[string]any) (any, error) {
					return summarize(ctx, svc)
				}})
			return err
		},
	}
}
