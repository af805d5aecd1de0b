package rpc

import (
	"fmt"
	"sync"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// flight counts the batches in flight, per caller and in all, refusing
// one past either bound at once rather than making it wait.
type flight struct {
	perCaller, perKernel int

	mu    sync.Mutex
	total int
	by    map[string]int
}

func newFlight(perCaller, perKernel int) *flight {
	return &flight{perCaller: perCaller, perKernel: perKernel, by: map[string]int{}}
}

// callerOf names whom a bound per caller counts: the user or the
// credential, or the anonymous caller.
func callerOf(p smshttp.Principal) string {
	switch {
	case p.UserID != 0:
		return fmt.Sprintf("user %d", p.UserID)
	case p.Authenticated:
		return "credential " + p.Name
	}
	return "anonymous"
}

func (f *flight) acquire(caller string) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.by[caller] >= f.perCaller:
		return nil, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf("%s has %d batches in flight; the limit is %d per caller", caller, f.by[caller], f.perCaller))
	case f.total >= f.perKernel:
		return nil, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf("%d batches are in flight; the limit is %d per kernel", f.total, f.perKernel))
	}
	f.by[caller]++
	f.total++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.total--
		if f.by[caller]--; f.by[caller] == 0 {
			delete(f.by, caller)
		}
	}, nil
}
