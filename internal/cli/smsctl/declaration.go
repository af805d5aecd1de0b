package smsctl

import (
	"io"
	"strings"
	"text/tabwriter"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// writeRequest prints what Approval a asks about: the plugin, its code,
// who asked and why, and everything the plugin declares it may do, the
// declaration the decision covers.
func writeRequest(w io.Writer, a *smsv1.Approval) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := &printer{w: tw}
	p.printf("approval %s asks about plugin %s (%s)\n", a.Name, a.Spec.PluginRef.Name, a.Spec.PluginID)
	p.printf("  code:\t%s\n", a.Spec.CodeHash)
	if a.Spec.RequestedBy != "" {
		p.printf("  requested by:\t%s\n", a.Spec.RequestedBy)
	}
	if len(a.Spec.Reasons) > 0 {
		p.printf("  sensitive:\t%s\n", strings.Join(a.Spec.Reasons, ", "))
	}
	d := a.Spec.Declaration
	switch {
	case d == nil:
		p.printf("  declares:\tnot recorded on this Approval; see the Plugin's spec\n")
	case declaresNothing(d):
		p.printf("  declares:\tnothing: no points, scopes or keys\n")
	default:
		p.printf("  declares:\n")
		for _, f := range declarationLines(d) {
			if len(f.items) > 0 {
				p.printf("    %s:\t%s\n", f.name, strings.Join(f.items, ", "))
			}
		}
	}
	if p.err != nil {
		return p.err
	}
	return tw.Flush()
}

// declarationLine is one field of a declaration.
type declarationLine struct {
	name  string
	items []string
}

func declarationLines(d *smsv1.Declaration) []declarationLine {
	return []declarationLine{{"points", d.Points}, {"scopes", d.Scopes}, {"inject", d.Inject}, {"optional", d.Optional},
		{"provide", d.Provide}, {"routes", d.Routes}, {"schedules", d.Schedules}, {"contributions", d.Contributions}}
}

func declaresNothing(d *smsv1.Declaration) bool {
	for _, f := range declarationLines(d) {
		if len(f.items) > 0 {
			return false
		}
	}
	return true
}
