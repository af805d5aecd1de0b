package controllers

import (
	"fmt"
	"slices"
	"strings"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// DeclarationOf is manifest m's declaration as an Approval shows it
// (adminv1.DeclarationOf, which the kernel's approvals carry too).
func DeclarationOf(m adminv1.Manifest) smsv1.Declaration {
	return smsv1.Declaration(adminv1.DeclarationOf(m))
}

// normalDeclaration sorts every list of d (a copy) and drops empty ones
// (adminv1.Declaration.Normal).
func normalDeclaration(d smsv1.Declaration) smsv1.Declaration {
	return smsv1.Declaration(adminv1.Declaration(d).Normal())
}

// declarationFields are a Declaration's lists by their field names.
func declarationFields(d smsv1.Declaration) [][2]any {
	return [][2]any{{"points", d.Points}, {"scopes", d.Scopes}, {"inject", d.Inject}, {"optional", d.Optional},
		{"provide", d.Provide}, {"routes", d.Routes}, {"schedules", d.Schedules}, {"contributions", d.Contributions}}
}

// declarationDiff names what now declares beyond or short of was, field
// by field ("points +schedule; scopes -net"), or "" when they are equal.
func declarationDiff(was, now smsv1.Declaration) string {
	a, b := declarationFields(normalDeclaration(was)), declarationFields(normalDeclaration(now))
	var parts []string
	for i := range a {
		old, cur := a[i][1].([]string), b[i][1].([]string)
		var ch []string
		for _, s := range cur {
			if !slices.Contains(old, s) {
				ch = append(ch, "+"+s)
			}
		}
		for _, s := range old {
			if !slices.Contains(cur, s) {
				ch = append(ch, "-"+s)
			}
		}
		if len(ch) == 0 && !slices.Equal(old, cur) {
			ch = append(ch, "a repeated item") // the same items, counted differently
		}
		if len(ch) > 0 {
			parts = append(parts, a[i][0].(string)+" "+strings.Join(ch, " "))
		}
	}
	return strings.Join(parts, "; ")
}

// DescribeDeclaration is d in a line, for messages: "points route,
// schedule; scopes net", or "nothing" when it declares nothing.
func DescribeDeclaration(d smsv1.Declaration) string {
	var parts []string
	for _, f := range declarationFields(normalDeclaration(d)) {
		if l := f[1].([]string); len(l) > 0 {
			parts = append(parts, f[0].(string)+" "+strings.Join(l, ", "))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// covers reports whether Approval a's declaration is d. An Approval the
// operator made before Approvals recorded declarations (a kernel approval
// id and no declaration) was bound to its declaration by the kernel and
// covers any; a pre-approval without one covers none.
func covers(a *smsv1.Approval, d smsv1.Declaration) bool {
	if a.Spec.Declaration == nil {
		return a.Spec.KernelApprovalID != ""
	}
	return declarationDiff(*a.Spec.Declaration, d) == ""
}

// pendingOf returns the kernel's pending request for plugin id's code
// hash with declaration d, or nil. The judge keeps one request per
// manifest and code, so the same code may wait under two declarations.
func pendingOf(s adminv1.PluginStatus, id, hash string, d smsv1.Declaration) *adminv1.Approval {
	for i := range s.Pending {
		a := &s.Pending[i]
		if a.PluginID == id && a.CodeHash == hash && declarationDiff(DeclarationOf(a.Manifest), d) == "" {
			return a
		}
	}
	return nil
}

// pendingByID returns the kernel's pending request with id, or nil.
func pendingByID(s adminv1.PluginStatus, id string) *adminv1.Approval {
	for i := range s.Pending {
		if s.Pending[i].ID == id {
			return &s.Pending[i]
		}
	}
	return nil
}

// declarationMismatch returns why Approval a does not cover what Plugin p
// now declares (a reason and a message naming the difference), or "".
// A pre-approval must name a declaration; an Approval the operator made
// before Approvals recorded one is left to the kernel, which bound it.
func declarationMismatch(a *smsv1.Approval, p *smsv1.Plugin) (string, string) {
	m, err := manifestOf(p)
	declares := ""
	if err == nil {
		declares = fmt.Sprintf(" (%s)", DescribeDeclaration(DeclarationOf(m)))
	}
	switch {
	case a.Spec.Declaration == nil && a.Spec.KernelApprovalID == "":
		return smsv1.ReasonDeclarationMissing, fmt.Sprintf("a pre-approval must name the declaration it approves, and this one has no "+
			"spec.declaration, so it is never applied; write a new Approval whose spec.declaration is what plugin %s declares%s",
			p.Name, declares)
	case a.Spec.Declaration == nil || err != nil:
		return "", "" // bound by the kernel; or an invalid spec, submitted nowhere, the Plugin says why
	}
	if diff := declarationDiff(*a.Spec.Declaration, DeclarationOf(m)); diff != "" {
		return smsv1.ReasonDeclarationChanged, fmt.Sprintf("plugin %s declares other than this approval covers (%s); "+
			"a new Approval asks about what it declares now", p.Name, diff)
	}
	return "", ""
}
