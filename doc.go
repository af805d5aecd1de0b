// Package sms is the root of the module: self-modifying software, run as a
// Kubernetes operator, a standalone kernel or a library. Its one export is
// Files, what the binaries carry of this repository (embed.go). The module,
// inside out (rings: each imports only rings below it; the architecture test
// in internal/architecture holds them):
//
//	kernel/                ring 0: fibers, points, keys, the event log, rollback
//	contracts/             ring 1: what drivers implement (Store, Database,
//	                       ModelService), the driver registries, and agentsource,
//	                       the one front end for agent code
//	judge/                 ring 2: gates agent plugins (lint, policy, approval, mount)
//	plugins/               ring 2: system plugins: http, collections, scheduler,
//	                       orm, auth (users, sessions), rbac (groups, access,
//	                       rules), agentloop, adminapi (adminapi/adminv1: the admin
//	                       API's wire contract and client, standard library only)
//	drivers/               ring 2: executors (goja, isolated), stores (sqlite,
//	                       postgres), models (scripted, anthropic, openai,
//	                       openaicompat, claudecli, codexcli over agentcli),
//	                       each exporting its Driver
//	baseline/              ring 3: composes them into one kernel server
//	api/v1/                ring 4: the Tenant, Plugin and Approval resources
//	controllers/           ring 4: their reconcilers (they speak to kernels
//	                       through adminv1 only and link no kernel)
//	internal/operator/     the manager, its webhooks and kernel runtimes
//	kernelcmd/             the public kernel command (manager kernel, and
//	                       an application's kernel binary): flags, driver
//	                       registries, start
//	examples/erp/          an application built on the public packages
//	internal/cli/          `kubectl sms` (smsctl) and `manager dev` (devenv)
//	cmd/                   the binaries: manager and kubectl-sms
//	ledger/                an island: the run ledger, standard library only
//	test/                  end-to-end suites: envtest, a real cluster, kubectl
//
// docs/ holds the guides; README.md starts with the two commands.
package sms
