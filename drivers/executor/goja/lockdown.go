package goja

import (
	"fmt"
	"sync"

	js "github.com/dop251/goja"
)

// lockdownSource removes code generation from a runtime before any other
// script runs in it. goja has no switch for that, so the script takes away
// every way to reach a compiler: eval is deleted, and the Function global
// and the constructor property of the plain, async and generator function
// prototypes (the only references to those constructors; goja has no
// async generators) become a function that throws. `f instanceof Function`
// still works. The source-lint gate refuses the obvious spellings first;
// this holds for every spelling (computed names, Reflect, prototype walks).
// GoError, a goja extension, is removed too.
const lockdownSource = `(function () {
'use strict';
const global = this;
const deny = function () { throw new TypeError('code generation from strings is disabled'); };
const plain = Object.getPrototypeOf(function () {});
deny.prototype = plain;
const protos = [plain, Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {})];
for (const p of protos) {
	Object.defineProperty(p, 'constructor', { value: deny, writable: false, enumerable: false, configurable: false });
}
Object.defineProperty(global, 'Function', { value: deny, writable: false, enumerable: false, configurable: false });
if (!delete global.eval || !delete global.GoError) { throw new Error('lockdown: a global could not be removed'); }
Object.freeze(deny);
})`

var (
	lockdownOnce    sync.Once
	lockdownProgram *js.Program
	lockdownErr     error
)

// lockdown removes code generation from rt (see lockdownSource).
func lockdown(rt *js.Runtime) error {
	lockdownOnce.Do(func() {
		lockdownProgram, lockdownErr = js.Compile("lockdown.js", lockdownSource, false)
	})
	if lockdownErr != nil {
		return fmt.Errorf("compile lockdown: %w", lockdownErr)
	}
	v, err := rt.RunProgram(lockdownProgram)
	if err != nil {
		return fmt.Errorf("run lockdown: %w", err)
	}
	fn, _ := js.AssertFunction(v)
	if _, err := fn(rt.GlobalObject()); err != nil {
		return fmt.Errorf("run lockdown: %w", err)
	}
	return nil
}
