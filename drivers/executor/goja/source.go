package goja

import (
	"errors"
	"fmt"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/contracts/agentsource"
)

// ErrSource marks agent code refused before it runs: too large, too deeply
// nested, a syntax error, an import or export goja cannot run (see package
// agentsource), or code goja's compiler refuses.
var ErrSource = errors.New("agent code refused")

// Compile prepares agent code within the limits (agentsource.Prepare, the
// front end the judge's lint gate reads code with too) and compiles it. The
// program's completion value is the wrapper function, which returns the
// activate function. Every error wraps ErrSource.
func Compile(code string, lim agentsource.Limits) (*js.Program, error) {
	p, err := agentsource.Prepare(code, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSource, err)
	}
	prg, err := js.CompileAST(p.AST, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSource, err)
	}
	return prg, nil
}
