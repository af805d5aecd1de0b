// Package kernelconfig is what `manager kernel` is told on its command
// line (Config, Model, Defaults) and the arguments that say it (Args).
// The operator's kubernetes runtime writes a kernel pod's arguments with
// it; package kernelcmd parses them and opens the kernel.
//
// Invariants:
//   - it imports the standard library only, so a program that only
//     configures kernels (the operator's reconcilers, kubectl sms) links
//     no kernel;
//   - Args leaves out every field equal to its default, and what Args
//     writes kernelcmd parses back to the same Config.
package kernelconfig
