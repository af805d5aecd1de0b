package collections

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/kernel"
)

// invokeMethods are the methods agent code may call with
// cap.invoke('collections', method, ...args).
var invokeMethods = map[string]func(s *service, ctx context.Context, args []any) (any, error){
	"definitions": func(s *service, _ context.Context, _ []any) (any, error) { return s.Definitions(), nil },
	"definition": func(s *service, _ context.Context, args []any) (any, error) {
		name, err := argName(args)
		if err != nil {
			return nil, err
		}
		return s.Definition(name)
	},
	"list":   invokeList,
	"get":    invokeGet,
	"create": invokeCreate,
	"update": invokeUpdate,
	"delete": invokeDelete,
}

// invokeActions are what the guard is asked about each record method.
var invokeActions = map[string]string{"list": "read", "get": "read", "create": "create", "update": "write", "delete": "unlink"}

// Invoke implements kernel.Invoker. Arguments are decoded JSON: names are
// strings, ids whole numbers, values and list options objects.
func (s *service) Invoke(ctx context.Context, method string, args []any) (any, error) {
	fn, ok := invokeMethods[method]
	if !ok {
		return nil, invalidf("collections has no method %q; it has %s", method,
			strings.Join(slices.Sorted(maps.Keys(invokeMethods)), ", "))
	}
	if action, ok := invokeActions[method]; ok {
		name, err := argName(args)
		if err != nil {
			return nil, err
		}
		if err := s.allow(ctx, name, action); err != nil {
			return nil, err
		}
	}
	out, err := fn(s, ctx, args)
	if err == nil && s.spend != nil && (method == "create" || method == "update" || method == "delete") {
		s.spend(ctx, kernel.Use{Rows: 1}) // one record, for the calling plugin's budget
	}
	return out, err
}

func invokeList(s *service, ctx context.Context, args []any) (any, error) {
	name, err := argName(args)
	if err != nil {
		return nil, err
	}
	opts, err := argListOptions(args, 1)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, name, opts)
}

func invokeGet(s *service, ctx context.Context, args []any) (any, error) {
	name, id, err := argNameID(args)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, name, id)
}

func invokeCreate(s *service, ctx context.Context, args []any) (any, error) {
	name, err := argName(args)
	if err != nil {
		return nil, err
	}
	values, err := argObject(args, 1, "the values")
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, name, values)
}

func invokeUpdate(s *service, ctx context.Context, args []any) (any, error) {
	name, id, err := argNameID(args)
	if err != nil {
		return nil, err
	}
	values, err := argObject(args, 2, "the values")
	if err != nil {
		return nil, err
	}
	return s.Update(ctx, name, id, values)
}

func invokeDelete(s *service, ctx context.Context, args []any) (any, error) {
	name, id, err := argNameID(args)
	if err != nil {
		return nil, err
	}
	if err := s.Delete(ctx, name, id); err != nil {
		return nil, err
	}
	return map[string]any{"id": id, "deleted": true}, nil
}

func argName(args []any) (string, error) {
	if len(args) == 0 {
		return "", invalidf("argument 1 must be a collection name, got nothing")
	}
	name, ok := args[0].(string)
	if !ok {
		return "", invalidf("argument 1 must be a collection name, got %s", kindOf(args[0]))
	}
	return name, nil
}

func argNameID(args []any) (string, int64, error) {
	name, err := argName(args)
	if err != nil {
		return "", 0, err
	}
	if len(args) < 2 {
		return "", 0, invalidf("argument 2 must be a record id, got nothing")
	}
	id, ok := asInt(args[1])
	if !ok || id < 1 {
		return "", 0, invalidf("argument 2 must be a record id (a whole number from 1), got %s", kindOf(args[1]))
	}
	return name, id, nil
}

// argObject returns args[i] as an object; what names it in errors.
func argObject(args []any, i int, what string) (map[string]any, error) {
	if len(args) <= i || args[i] == nil {
		return nil, invalidf("argument %d must be an object of %s, got nothing", i+1, what)
	}
	m, ok := args[i].(map[string]any)
	if !ok {
		return nil, invalidf("argument %d must be an object of %s, got %s", i+1, what, kindOf(args[i]))
	}
	return m, nil
}

// argListOptions reads the optional {where, limit, offset} at args[i].
func argListOptions(args []any, i int) (ListOptions, error) {
	var opts ListOptions
	if len(args) <= i || args[i] == nil {
		return opts, nil
	}
	m, err := argObject(args, i, "list options {where, limit, offset}")
	if err != nil {
		return opts, err
	}
	for k, v := range m {
		switch k {
		case "where":
			w, ok := v.(map[string]any)
			if !ok && v != nil {
				return opts, invalidf("list option where must be an object of field values, got %s", kindOf(v))
			}
			opts.Where = w
		case "limit", "offset":
			n, ok := asInt(v)
			if !ok {
				return opts, invalidf("list option %s must be a whole number, got %s", k, kindOf(v))
			}
			if k == "limit" {
				opts.Limit = int(n)
			} else {
				opts.Offset = int(n)
			}
		default:
			return opts, invalidf("unknown list option %q; use where, limit and offset", k)
		}
	}
	return opts, nil
}
