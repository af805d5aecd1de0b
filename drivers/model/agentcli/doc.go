// Package agentcli holds what the drivers of agent CLIs (claude, codex)
// share: the MCP server through which a CLI calls the kernel's tools for
// one turn (loopback HTTP, a bearer token per server, only the turn's
// tools), and the running of a CLI process whose output is read line by
// line. Each driver adds a contracts.SessionBackend: the CLI's arguments
// and how to read what it prints; contracts.SessionModel does the rest.
package agentcli
