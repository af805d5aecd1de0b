package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// labelPlugin labels an Approval with its Plugin's name.
const labelPlugin = "sms.dev/plugin"

// maxNameTries bounds the names createApproval tries for one request.
const maxNameTries = 8

// ApprovalName is the name of the n-th Approval (from 0) the operator
// creates for kernel approval kernelApprovalID of Plugin plugin:
// "<plugin>-<10 hex digits of the kernel approval id>", then "-2", "-3",
// ... The kernel gives the same id to every request for the same manifest
// and code, so code that comes back, or is submitted again after a
// denial, is asked about under the next name, never hidden behind an old
// decision.
func ApprovalName(plugin, kernelApprovalID string, n int) string {
	name := strings.TrimRight(truncate(plugin, 230), "-.")
	name += "-" + shortApprovalID(kernelApprovalID)
	if n > 0 {
		name += "-" + strconv.Itoa(n+1)
	}
	return name
}

// shortApprovalID is 10 hex digits of a kernel approval id: the digits of
// its submission key (judge ids are "<plugin id>-<32 hex digits>"), else
// of its SHA-256.
func shortApprovalID(id string) string {
	_, key, _ := cutLast(id, "-")
	if len(key) >= 10 && isLowerHex(key) {
		return key[:10]
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:5])
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", s, false
	}
	return s[:i], s[i+len(sep):], true
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// usable reports whether an Approval may still decide something: it is
// neither being deleted nor Expired.
func usable(a *smsv1.Approval) bool {
	return a.DeletionTimestamp.IsZero() && !meta.IsStatusConditionTrue(a.Status.Conditions, smsv1.ConditionExpired)
}

// later reports whether a was created after b (ties: the later name of
// one request's series, then the greater name), so the newest decision
// on the same code and declaration wins.
func later(a, b *smsv1.Approval) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) > len(b.Name)
	}
	return a.Name > b.Name
}

// pick returns the better of found and a: one with a decision over one
// without, then the newer.
func pick(found, a *smsv1.Approval) *smsv1.Approval {
	switch {
	case found == nil:
		return a
	case (found.Spec.Decision == "") != (a.Spec.Decision == ""):
		if a.Spec.Decision != "" {
			return a
		}
		return found
	case later(a, found):
		return a
	}
	return found
}

// mine reports whether Approval a is Plugin p's to act on: a
// pre-approval, or one the operator made for p (which controls it). Only
// the operator may write a kernel approval id (the webhook refuses it from
// anyone else); this holds for Approvals that got in around the webhook.
func mine(a *smsv1.Approval, p *smsv1.Plugin) bool {
	return a.Spec.KernelApprovalID == "" || metav1.IsControlledBy(a, p)
}

// answers reports whether Approval a may answer the kernel's pending
// request for Plugin p: it is the operator's Approval of that request
// (controlled by p and naming its id) or a pre-approval (no kernel
// approval id), and it names the request's code hash and declaration.
// Anything else was written by someone who may not speak for the kernel:
// an Approval a person wrote with a kernel approval id, reasons or a
// requester could show a forged request to whoever decides.
func answers(a *smsv1.Approval, p *smsv1.Plugin, pending *adminv1.Approval) bool {
	if !mine(a, p) || (a.Spec.KernelApprovalID != "" && a.Spec.KernelApprovalID != pending.ID) {
		return false
	}
	return a.Spec.PluginRef.Name == p.Name && a.Spec.CodeHash == pending.CodeHash && a.Spec.Declaration != nil &&
		declarationDiff(*a.Spec.Declaration, DeclarationOf(pending.Manifest)) == ""
}
