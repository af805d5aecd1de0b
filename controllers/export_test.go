package controllers

import (
	"sigs.k8s.io/controller-runtime/pkg/event"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// AddIndexes registers the operator's field indexes, for tests that run
// parts of the operator on their own manager.
var AddIndexes = addIndexes

// PluginWakes is the channel the watchers wake Plugins through.
func (w *Watchers) PluginWakes() <-chan event.TypedGenericEvent[*smsv1.Plugin] { return w.plugins }

// CountsInterval is how often, at most, a Tenant's plugin counts are
// written: a test waits it out before calling a world steady.
const CountsInterval = countsInterval

// SkewAllowance is skewAllowance, for tests.
const SkewAllowance = skewAllowance
