// Command sms-kernel is the kernel binary of the manager's image: `manager
// kernel` without the operator. It links kernelcmd and what a kernel runs
// (stores, executors, model and object-store drivers) and nothing of
// Kubernetes, so each tenant's kernel maps and initializes only that. The
// operator starts kernel pods of its own image with it (`manager operator
// --kernel-command`); its subcommands and flags are `manager kernel`'s:
//
//	sms-kernel kernel --listen 127.0.0.1:8787 --store sqlite:./sms-data/kernel.db
//
// The isolated executor starts `sms-sandbox` from the same directory for
// each agent plugin when it is there, and this binary's hidden `sandbox`
// subcommand otherwise.
package main
