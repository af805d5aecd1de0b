// Package clitest helps test the agent CLI drivers against the real
// CLIs, offline: local fakes of the providers' HTTP APIs (the Messages API
// for claude, the Responses API for codex) that replay scripted turns in
// the providers' wire formats, and the lookup of the CLIs that
// hack/agent-clis.sh installs.
package clitest
