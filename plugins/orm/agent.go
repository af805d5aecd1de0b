package orm

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
)

// userService is the value of UserKey: the Service as the user being
// served. Every call runs with the caller's OpContext and sudo off; no
// argument names a user, so agent code cannot pick whom it acts as.
type userService struct{ s *service }

// MarshalJSON is what cap.get('orm-user') answers: the model names.
func (u userService) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"models": u.s.Models()})
}

// userOp is who an agent call acts for: the OpContext its ctx carries (an
// ORM operation calling an agent handler) or the one ContextOf derives
// from the request or chat turn; never sudo.
func (u userService) userOp(ctx context.Context) context.Context {
	op := u.s.opOf(ctx)
	op.Sudo = false
	return WithOp(ctx, op)
}

// userMethods are the methods agent code may invoke; args are decoded JSON.
var userMethods = map[string]func(s *service, ctx context.Context, model string, args []any) (any, error){
	"spec": func(s *service, _ context.Context, model string, _ []any) (any, error) { return s.Spec(model) },
	"search": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		d, err := decodeDomain(arg(args, 1))
		if err != nil {
			return nil, err
		}
		opts, err := decodeOptions(arg(args, 2))
		if err != nil {
			return nil, err
		}
		return s.Search(ctx, model, d, opts)
	},
	"search_read": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		d, err := decodeDomain(arg(args, 1))
		if err != nil {
			return nil, err
		}
		spec, err := decodeSpec(arg(args, 2))
		if err != nil {
			return nil, err
		}
		opts, err := decodeOptions(arg(args, 3))
		if err != nil {
			return nil, err
		}
		ids, err := s.Search(ctx, model, d, opts)
		if err != nil {
			return nil, err
		}
		return s.Read(ctx, model, ids, spec)
	},
	"count": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		d, err := decodeDomain(arg(args, 1))
		if err != nil {
			return nil, err
		}
		return s.Count(ctx, model, d)
	},
	"read": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		ids, err := decodeIDs(arg(args, 1))
		if err != nil {
			return nil, err
		}
		spec, err := decodeSpec(arg(args, 2))
		if err != nil {
			return nil, err
		}
		return s.Read(ctx, model, ids, spec)
	},
	"create": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		values, err := decodeValues(arg(args, 1))
		if err != nil {
			return nil, err
		}
		return s.Create(ctx, model, values)
	},
	"write": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		ids, err := decodeIDs(arg(args, 1))
		if err != nil {
			return nil, err
		}
		values, err := decodeValues(arg(args, 2))
		if err != nil {
			return nil, err
		}
		return true, s.Write(ctx, model, ids, values)
	},
	"unlink": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		ids, err := decodeIDs(arg(args, 1))
		if err != nil {
			return nil, err
		}
		return true, s.Unlink(ctx, model, ids)
	},
	"read_group": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		g, err := decodeGroup(arg(args, 1))
		if err != nil {
			return nil, err
		}
		return s.ReadGroup(ctx, model, g)
	},
	"call": func(s *service, ctx context.Context, model string, args []any) (any, error) {
		method, ok := arg(args, 1).(string)
		if !ok {
			return nil, argErr("argument 2 of call must be a method name, got %s", kindOf(arg(args, 1)))
		}
		ids, err := decodeIDs(arg(args, 2))
		if err != nil {
			return nil, err
		}
		margs, ok := arg(args, 3).(map[string]any)
		if !ok && arg(args, 3) != nil {
			return nil, argErr("argument 4 of call must be an object of arguments, got %s", kindOf(arg(args, 3)))
		}
		// A method acts on its records, so a caller from outside (agent
		// code, an RPC batch) needs to be allowed to write them.
		if err := s.writable(ctx, model, ids); err != nil {
			return nil, err
		}
		return s.Call(ctx, model, MethodRequest{Method: method, IDs: ids, Args: margs})
	},
}

// userArity is how many arguments each method takes at most; more is an
// error, so nothing an agent adds (a sudo flag, a user) goes unnoticed.
var userArity = map[string]int{"spec": 1, "search": 3, "search_read": 4, "count": 2, "read": 3,
	"create": 2, "write": 3, "unlink": 2, "read_group": 2, "call": 4}

func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// Invoke implements kernel.Invoker: models takes no argument; every other
// method takes the model name first.
func (u userService) Invoke(ctx context.Context, method string, args []any) (any, error) {
	if method == "models" {
		if len(args) > 0 {
			return nil, argErr("models takes no arguments, got %d", len(args))
		}
		return u.s.Models(), nil
	}
	fn, ok := userMethods[method]
	if !ok {
		return nil, argErr("%s has no method %q; it has models, %s", UserKey, method,
			strings.Join(slices.Sorted(maps.Keys(userMethods)), ", "))
	}
	model, ok := arg(args, 0).(string)
	if !ok {
		return nil, argErr("argument 1 of %s must be a model name, got %s", method, kindOf(arg(args, 0)))
	}
	if n := userArity[method]; len(args) > n {
		return nil, argErr("%s takes at most %d arguments, got %d", method, n, len(args))
	}
	out, err := fn(u.s, u.userOp(ctx), model, args)
	return out, inModel(err, model)
}

// inModel names model in an argument error that names none.
func inModel(err error, model string) error {
	var e *Error
	if errors.As(err, &e) && e.Model == "" {
		c := *e
		c.Model = model
		return &c
	}
	return err
}
