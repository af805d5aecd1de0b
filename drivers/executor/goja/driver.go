package goja

import (
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Driver describes the in-process executor to a driver registry.
var Driver = contracts.ExecutorDriver{
	DriverInfo: contracts.DriverInfo{Name: "goja", Help: "in process"},
	Open: func(s contracts.ExecutorSettings) (kernel.Executor, error) {
		return New(Options{Logger: s.Logger}), nil
	},
}
