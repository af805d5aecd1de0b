// Package claudecli is the model driver of the claude CLI: a person who
// ran `claude login` runs the agent on their subscription, with no API
// key. Each turn runs `claude -p` in an empty scratch directory with
// none of the CLI's own tools; the kernel's tools reach it through an MCP
// server that lives for the turn (package agentcli), and
// contracts.SessionModel makes each of its tool calls wait for the agent
// loop. One CLI session per conversation, resumed while the system prompt
// and the history stay the same.
package claudecli
