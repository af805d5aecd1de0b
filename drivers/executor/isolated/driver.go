package isolated

import (
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Driver describes the isolated executor to a driver registry. It keeps
// two warm children, as a kernel's judge wants: a submission's load gate
// and its mount each take one. The pool empties after a minute without a
// Load.
var Driver = contracts.ExecutorDriver{
	DriverInfo: contracts.DriverInfo{Name: "isolated", Help: "child processes with OS limits"},
	Open: func(s contracts.ExecutorSettings) (kernel.Executor, error) {
		exec, err := New(Options{Logger: s.Logger, Warm: 2, IdleAfter: s.IdleAfter})
		if err != nil {
			return nil, err
		}
		return exec, nil
	},
}
