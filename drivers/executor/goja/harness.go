package goja

import (
	"fmt"
	"strconv"
	"sync"

	js "github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// harnessSource is the JavaScript side of the bridge: the cap object and a
// describe function for thrown values. It runs before any agent code, and
// the only host function, host, is its parameter: agent code has no name to
// reach it by. host returns a native promise that the Go side settles with
// plain values it built itself; it never hands JavaScript a Go object.
const harnessSource = `(function (host) {
'use strict';
const freeze = Object.freeze, Err = Error, Str = String;

function describe(e) {
	try {
		if (e instanceof Err) return Str(e.name) + ': ' + Str(e.message);
		return 'non-error value thrown: ' + Str(e);
	} catch (x) {
		return 'a value that cannot be printed was thrown';
	}
}

const cap = freeze({
	get: (key) => host('get', Str(key)),
	invoke: (key, method, ...args) => host('invoke', Str(key), Str(method), args),
	provide: (key, value) => host('provide', Str(key), value),
	contribute: (point, item) => host('contribute', Str(point), item),
	log: (...args) => host('log', args),
});

return freeze({ cap: cap, describe: describe, Error: Err });
})`

var (
	harnessOnce    sync.Once
	harnessProgram *js.Program
	harnessErr     error
)

// harness is the Go handle on one runtime's bridge.
type harness struct {
	cap       js.Value
	describe  js.Callable
	errorCtor js.Value
}

// installHarness runs the bridge script in rt with host as its host function.
func installHarness(rt *js.Runtime, host func(js.FunctionCall) js.Value) (harness, error) {
	harnessOnce.Do(func() {
		harnessProgram, harnessErr = js.Compile("harness.js", harnessSource, true)
	})
	if harnessErr != nil {
		return harness{}, fmt.Errorf("compile bridge: %w", harnessErr)
	}
	v, err := rt.RunProgram(harnessProgram)
	if err != nil {
		return harness{}, fmt.Errorf("run bridge: %w", err)
	}
	factory, _ := js.AssertFunction(v)
	obj, err := factory(js.Undefined(), rt.ToValue(host))
	if err != nil {
		return harness{}, fmt.Errorf("start bridge: %w", err)
	}
	o := obj.ToObject(rt)
	describe, ok := js.AssertFunction(o.Get("describe"))
	if !ok {
		return harness{}, fmt.Errorf("bridge has no describe function")
	}
	return harness{cap: o.Get("cap"), describe: describe, errorCtor: o.Get("Error")}, nil
}

// newRuntime returns a runtime configured with the unit's limits and
// sources. eval and Function parse with source maps disabled, like Load.
func newRuntime(o Options) *js.Runtime {
	rt := js.New()
	rt.SetMaxCallStackSize(o.MaxCallStackSize)
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	rt.SetTimeSource(o.Now)
	rt.SetRandSource(o.Rand)
	return rt
}

// quote returns s as a short quoted string for error messages.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strconv.Quote(s)
}
