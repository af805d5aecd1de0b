package meta

import (
	"context"
	"fmt"
)

// Invoke implements kernel.Invoker for agent code and the RPC plugin:
// view(model, type), views(model), action(name), actions(), menus().
func (s *service) Invoke(ctx context.Context, method string, args []any) (any, error) {
	str := func(i int, what string) (string, error) {
		if i >= len(args) {
			return "", fmt.Errorf("%w: %s needs %s as argument %d", ErrInvalid, method, what, i+1)
		}
		v, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf("%w: argument %d of %s must be %s, a string", ErrInvalid, i+1, method, what)
		}
		return v, nil
	}
	arity := map[string]int{"view": 2, "views": 1, "action": 1, "actions": 0, "menus": 0}
	n, ok := arity[method]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no method %q; it has view, views, action, actions, menus", ErrInvalid, Key, method)
	}
	if len(args) > n {
		return nil, fmt.Errorf("%w: %s takes %d arguments, got %d", ErrInvalid, method, n, len(args))
	}
	switch method {
	case "actions":
		return s.Actions(ctx)
	case "menus":
		return s.Menus(ctx)
	}
	first, err := str(0, map[string]string{"view": "a model name", "views": "a model name", "action": "an action name"}[method])
	if err != nil {
		return nil, err
	}
	switch method {
	case "views":
		return s.Views(ctx, first)
	case "action":
		return s.Action(ctx, first)
	}
	viewType, err := str(1, "a view type")
	if err != nil {
		return nil, err
	}
	return s.View(ctx, first, viewType)
}
