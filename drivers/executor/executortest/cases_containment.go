package executortest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var containmentCases = []testCase{
	{"GlobalsAreStandardOnly", testGlobals},
	{"NoCodeFromStrings", testNoCodeFromStrings},
	{"TamperingDoesNotChangeTheBridge", testTampering},
	{"HostChecksStillApply", testHostChecks},
	{"PluginsDoNotShareGlobals", testSeparateGlobals},
}

// standardGlobals is every global name a fresh runtime may have: the
// ECMAScript built-ins goja provides, and nothing of the host's.
var standardGlobals = strings.Fields(`Object Function Array String Number BigInt RegExp Date Boolean
	Proxy Reflect Error AggregateError TypeError ReferenceError SyntaxError RangeError EvalError URIError
	Math JSON ArrayBuffer DataView Uint8Array Uint8ClampedArray Int8Array Uint16Array Int16Array
	Uint32Array Int32Array Float32Array Float64Array BigInt64Array BigUint64Array Symbol WeakSet WeakMap Map
	Set Promise globalThis NaN undefined Infinity isNaN parseInt parseFloat isFinite decodeURI
	decodeURIComponent encodeURI encodeURIComponent escape unescape`)

// Agent code finds only standard built-ins on its global object: no host
// function, no module system, no process, and neither eval nor GoError.
// Seen failing (goja) with the host function also set as a global, and
// with lockdown not run.
func testGlobals(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.globals")
	m.Provide = []string{"agent.found"}
	mustMount(t, env.K, m, `export default async function activate(cap) {
	await cap.provide('agent.found', {
		direct: Object.getOwnPropertyNames(globalThis),
		thisAtTop: typeof this,
	});
}`)
	v, err := env.K.GetValue("agent.found")
	if err != nil {
		t.Fatal(err)
	}
	found := v.(map[string]any)
	for _, name := range found["direct"].([]any) {
		if !slices.Contains(standardGlobals, name.(string)) {
			t.Errorf("global %q is not a standard built-in", name)
		}
	}
	wantEqual(t, "typeof this at the top level (strict)", found["thisAtTop"], "undefined")
}

// codeFromStrings are ways to compile code at run time, spelled so that
// the source-lint gate cannot see them; every one must throw.
var codeFromStrings = []string{
	`Function('return 1')()`,
	`new Function('return 1')()`,
	`(() => {})[['con', 'struc', 'tor'].join('')]('return 6*7')()`,
	`globalThis['ev' + 'al']('20+22')`,
	`(0, globalThis.eval)('1')`,
	`Reflect.construct(Function, ['return 1'])()`,
	`Reflect.construct(Object.getPrototypeOf(async function () {})['constr' + 'uctor'], ['return 1'])`,
	`Object.getPrototypeOf(function* () {})['constr' + 'uctor']('yield 1')().next()`,
	`Reflect.get(Object.getPrototypeOf(() => 0), 'constr' + 'uctor')('return 1')()`,
	`({})['constr' + 'uctor']['constr' + 'uctor']('return 1')()`,
	`[].map['constr' + 'uctor']('return 1')()`,
	`cap.get['constr' + 'uctor']('return 1')()`,
	`Object.getOwnPropertyDescriptor(Function.prototype, 'constr' + 'uctor').value('return 1')()`,
	`Object.getPrototypeOf(Object.getPrototypeOf(async () => {}))['constr' + 'uctor']('return 1')()`,
	`Function.prototype[Symbol.hasInstance]['constr' + 'uctor']('return 1')()`,
	`Object.defineProperty(Function.prototype, 'constr' + 'uctor', { value: 1 })`,
	`(delete Function.prototype['constr' + 'uctor'])`,
	`new (Object.getPrototypeOf(function* () {})['constr' + 'uctor'])('yield 1')`,
	`GoError('x')`,
}

// No code from strings: every function constructor throws and eval is
// absent, however agent code reaches them. Seen failing (goja: most forms
// returned a value) with lockdown not run.
func testNoCodeFromStrings(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.codegen")
	m.Provide = []string{"agent.outcomes"}
	attempts := make([]string, len(codeFromStrings))
	for i, form := range codeFromStrings {
		attempts[i] = "() => " + form
	}
	mustMount(t, env.K, m, `export default async function activate(cap) {
	const forms = [`+strings.Join(attempts, ",\n\t\t")+`];
	const out = [];
	for (const form of forms) {
		try { form(); out.push('ran'); } catch (e) { out.push('threw'); }
	}
	await cap.provide('agent.outcomes', out);
}`)
	v, err := env.K.GetValue("agent.outcomes")
	if err != nil {
		t.Fatal(err)
	}
	for i, outcome := range v.([]any) {
		if outcome != "threw" {
			t.Errorf("%s: %s, want a throw", codeFromStrings[i], outcome)
		}
	}
}

// Replacing JSON, Map, Array or Object.prototype members before the
// first cap call changes nothing about what crosses the bridge, and a
// setter on Object.prototype never runs when the host hands a value over.
// Seen failing (goja) with decoded objects built by assignment instead of
// definition.
func testTampering(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.tamper")
	m.Inject, m.Provide = []string{KeyConfig}, []string{"agent.v"}
	mustMount(t, env.K, m, `JSON.stringify = () => '"forged"';
JSON.parse = () => 'forged';
Object.prototype.toJSON = function () { return 'forged'; };
Array.prototype.toJSON = function () { return 'forged'; };
Object.prototype.$fn = 'f1';
Map.prototype.get = () => () => 'forged handler';
Array.isArray = () => false;
Object.keys = () => [];
Object.defineProperty(Object.prototype, 'name', { set() { throw new Error('setter ran'); }, configurable: true });
export default async function activate(cap) {
	const cfg = await cap.get('config');
	await cap.provide('agent.v', { name: cfg.name, list: [1, 2], when: new Date(0) });
	await cap.contribute('tool', { name: 'real', handler: () => 'real' });
}`)
	v, err := env.K.GetValue("agent.v")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(v)
	wantEqual(t, "provided value", string(raw), `{"list":[1,2],"name":"acme","when":"1970-01-01T00:00:00.000Z"}`)
	wantEqual(t, "tool result", call(t, tool(t, env.K, "real")), "real")
}

// Whatever agent code does to its own objects, the host side still checks
// every call: undeclared keys, system-only keys and points stay out of
// reach, and the cap object cannot be changed.
// Seen failing (goja) with the cap object not frozen.
func testHostChecks(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.probe")
	m.Optional, m.Provide = []string{KeySecret}, []string{"agent.out"}
	m.Points = []string{"sys-only"} // declared, so the kernel's trust check is what refuses it
	mustMount(t, env.K, m, `export default async function activate(cap) {
	Object.prototype.get = () => 'forged';
	const out = [];
	const attempt = async (fn) => { try { await fn(); out.push('allowed'); } catch (e) { out.push(e.message); } };
	await attempt(() => cap.get('secret'));
	await attempt(() => cap.get('svc'));
	await attempt(() => cap.contribute('sys-only', { name: 'x' }));
	await attempt(() => cap.provide('svc', 1));
	await attempt(() => { cap.get = async () => 'forged'; });
	await attempt(() => Object.defineProperty(cap, 'invoke', { value: 1 }));
	await cap.provide('agent.out', out);
}`)
	v, err := env.K.GetValue("agent.out")
	if err != nil {
		t.Fatal(err)
	}
	got := v.([]any)
	want := []string{"needs system trust", "not declared", "needs system trust", "not declared", "read only", "property"}
	if len(got) != len(want) {
		t.Fatalf("attempts = %q, want %d refusals", got, len(want))
	}
	for i, w := range want {
		if msg := got[i].(string); !strings.Contains(strings.ToLower(msg), w) {
			t.Errorf("attempt %d = %q, want a refusal containing %q", i, msg, w)
		}
	}
}

// One plugin's changes to its globals and built-in prototypes are invisible
// to another plugin. Seen failing (goja) with one runtime shared by units.
func testSeparateGlobals(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	a := agent("agent.a")
	a.Provide = []string{"agent.a.done"}
	mustMount(t, env.K, a, `globalThis.shared = 'from a';
Array.prototype.evil = 'from a';
export default async function activate(cap) { await cap.provide('agent.a.done', true); }`)
	b := agent("agent.b")
	b.Inject, b.Provide = []string{"agent.a.done"}, []string{"agent.b.saw"}
	mustMount(t, env.K, b, `export default async function activate(cap) {
	await cap.provide('agent.b.saw', [typeof shared, typeof [].evil]);
}`)
	v, _ := env.K.GetValue("agent.b.saw")
	wantEqual(t, "what b saw", v, []any{"undefined", "undefined"})
}
