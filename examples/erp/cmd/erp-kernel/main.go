// Command erp-kernel is the example ERP's kernel binary: the sms kernel
// command with the ERP's plugins. It has the subcommands and flags of
// `manager kernel`, so the operator runs its image for a Tenant whose
// spec.image names it, and it runs standalone:
//
//	go run ./examples/erp/cmd/erp-kernel kernel --users --bootstrap-admin-file admin.txt
package main

import (
	"github.com/sms-baseline/sms/examples/erp"
	"github.com/sms-baseline/sms/kernelcmd"
)

func main() { kernelcmd.App{Name: "erp-kernel", Plugins: erp.Plugins()}.Main() }
