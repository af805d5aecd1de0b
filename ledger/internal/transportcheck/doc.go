// Package transportcheck inspects a Go package and reports every way it could
// reach outside its process, so that the ledger's core stays structurally
// incapable of sending anything.
//
// [Check] reads the package with `go list` and go/parser, type-checks it with
// go/types, and reports a [Violation] for:
//
//   - an import outside the standard library, or of net, net/..., os/exec,
//     syscall, plugin, unsafe, log/syslog or cgo, in any non-test file,
//     including files excluded by build constraints;
//   - a transitive dependency on net, net/..., os/exec, plugin or log/syslog;
//   - an exported function or method taking a parameter that is, or
//     contains, a function type (a callback), or an exported variable of
//     such a type;
//   - an exported function, method or interface method whose name implies an
//     outbound effect (send, notify, post, publish, dispatch, emit, fetch,
//     push, deliver, execute, perform, call, webhook, mail);
//   - any floating-point or complex value, since money is integer minor units.
//
// Test files are not inspected: tests may do what the package may not.
package transportcheck
