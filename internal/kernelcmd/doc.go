// Package kernelcmd opens one tenant's kernel server from the settings of
// `manager kernel`: its store, executor, model and judge policy. The
// command, the operator's kubernetes runtime (which writes the settings
// into a StatefulSet's arguments) and its local runtime (which runs
// kernels inside the manager's process) share it, so a kernel behaves the
// same wherever it runs.
package kernelcmd
