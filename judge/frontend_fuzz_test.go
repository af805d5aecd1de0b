package judge

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts/agentsource"
	gojaexec "github.com/sms-baseline/sms/drivers/executor/goja"
)

// frontEndSeeds are the inputs of the lint gate's, the front end's and the
// executors' load tests, and code at each limit and one past it.
func frontEndSeeds() []string {
	const fn = "export default async function activate(cap) {}\n"
	padded := func(n int) string { return fn + "//" + strings.Repeat("x", n-len(fn)-2) }
	nested := func(n int) string { return fn + "const x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	return []string{
		fn,
		"const xs = [1, 2].map((x) => x * 2);\nconst o = { a: { b: `t${xs}` } };\n" + fn,
		"const s = 'eval Function require';\n" + fn,
		fn + "eval('1')",
		fn + "(0, globalThis.eval)('1')",
		fn + "const F = (() => 1)['constructor']",
		"function f(o) { with (o) { x; } }\n" + fn,
		"import x from 'y';\n" + fn,
		fn + "import('y')",
		fn + "export const a = 1",
		fn + fn,
		"function activate(cap) {}",
		"function f() {\n" + fn + "}",
		"export default async function activate(cap) {",
		"const s = 'export default function';",
		"export default function (cap) {}\n(0, 1)",
		"export\ndefault function activate(cap) {}\n(0, 1)",
		"// export default function x() {}\nexport default function activate(cap) {}",
		"'export default function'; export default function a(){}",
		"const s = 'export default function activate(';\nfunction activate(cap) {}",
		"export default 42",
		"`${`${activate}`}`",
		"`${",
		fn + "let a; let a;",
		padded(MaxSourceBytes),
		padded(MaxSourceBytes + 1),
		nested(MaxSourceNesting),
		nested(MaxSourceNesting + 1),
	}
}

// The lint gate and the executor read agent code with one front end: the
// front end refuses code for the gate exactly when it refuses it for the
// executor, with the same problem on the same line, and whatever the gate
// accepts the executor compiles or refuses in goja's compiler, never in
// the front end. Seen failing with the executor's DefaultMaxSourceNesting
// set one below agentsource.DefaultMaxNesting, and with its
// DefaultMaxSourceBytes set one below the judge's MaxSourceBytes: the
// limits differ, and without that comparison the seeds at each limit were
// accepted by lint and refused by the executor's front end alone.
//
// Inputs longer than maxFuzzInput are left to the seeds: each costs a
// parse of up to 256 KiB, and minimising one stalls the fuzzer for a
// minute; the limits themselves are compared first.
func FuzzLintAgreesWithTheExecutor(f *testing.F) {
	limits := gojaexec.Options{}.Limits()
	if limits != sourceLimits {
		f.Fatalf("the executor's default limits %+v differ from the lint gate's %+v", limits, sourceLimits)
	}
	seeds := frontEndSeeds()
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > maxFuzzInput && !slices.Contains(seeds, code) {
			return
		}
		lintErr := lint(code)
		_, execErr := gojaexec.Compile(code, limits)
		lintFront, execFront := frontEnd(lintErr), frontEnd(execErr)
		switch {
		case lintFront == nil && execFront != nil:
			t.Fatalf("lint accepted %q in the front end, the executor refused it: %v", code, execErr)
		case lintFront != nil && execFront == nil:
			t.Fatalf("the executor accepted %q in the front end, lint refused it: %v", code, lintErr)
		case lintFront != nil && *lintFront != *execFront:
			t.Fatalf("front-end refusals of %q differ: lint %#v, executor %#v", code, *lintFront, *execFront)
		}
		if lintErr == nil && execErr != nil && !errors.Is(execErr, gojaexec.ErrSource) {
			t.Fatalf("lint accepted %q, the executor failed: %v", code, execErr)
		}
	})
}

// maxFuzzInput bounds the inputs the fuzzer makes up.
const maxFuzzInput = 16 << 10

// frontEnd returns the front end's refusal err carries, or nil.
func frontEnd(err error) *agentsource.Error {
	var e *agentsource.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
