// Command manager is the project's one binary. Its subcommands are thin
// wiring over packages: flags and environment in, a package's entry point
// called, an exit status out.
//
// `manager kernel` serves one tenant's kernel (package baseline): the system
// plugins, the judge and the admin API over HTTP, on SQLite or Postgres,
// until SIGTERM, when in-flight requests finish and the store closes.
//
// The hidden `manager sandbox` subcommand is the child process of the
// isolated executor (package drivers/executor/isolated): it applies its OS
// limits, then serves one agent plugin's unit over stdin and stdout. People
// never run it by hand, so it is left out of the help.
package main
