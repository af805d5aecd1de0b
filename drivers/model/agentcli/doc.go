// Package agentcli holds what the drivers of agent CLIs (claude, codex)
// share, so that a third CLI needs only a small backend: finding the CLI
// (CLI.Find, whose errors say how to install it and log in), a turn's
// Workspace (the MCP server through which the CLI calls the kernel's
// tools for that turn, on loopback behind a bearer token minted for it,
// and an empty scratch directory with 0600 files for what must stay off
// the command line), the environment a CLI may see (Environ), and the
// running of a CLI process whose output is read line by line (Run). Each
// driver adds a contracts.SessionBackend (the CLI's arguments and how to
// read what it prints); contracts.SessionModel does the rest.
package agentcli
