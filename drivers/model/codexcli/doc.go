// Package codexcli is the model driver of the codex CLI: a person who ran
// `codex login` runs the agent on their ChatGPT subscription, with no API
// key. Each turn runs `codex exec` in an empty scratch directory, with a
// read-only sandbox, no network and no web search (codex's own shell
// tools cannot be removed, only contained). The kernel's tools reach it
// through an MCP server that lives for the turn (package agentcli),
// marked read-only so that codex runs them without asking: they never
// touch the host, and the judge is their gate. One codex thread per
// conversation, resumed by its id.
package codexcli
