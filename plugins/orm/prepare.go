package orm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Command ops of x2many values.
const (
	CmdCreate = "create"
	CmdUpdate = "update"
	CmdDelete = "delete"
	CmdLink   = "link"
	CmdUnlink = "unlink"
	CmdSet    = "set"
)

// prepared is a create's or write's values, checked and converted before
// any transaction starts: column arguments and x2many commands.
type prepared struct {
	model *model
	cols  map[string]any
	x2m   []x2mChange
	raw   map[string]any
}

type x2mChange struct {
	f    *field
	cmds []command
}

type command struct {
	op     string
	id     int64
	ids    []int64
	values *prepared
}

// preparer checks values for one operation.
type preparer struct {
	sch    *schema
	op     OpContext
	s      *service
	nested bool   // inside an x2many command: no further commands
	except string // a field the command itself sets (a one2many's inverse)
}

// prepare checks values against m. For a create it applies defaults and
// requires every required field; for a write only the given fields count.
func (p preparer) prepare(m *model, values map[string]any, create bool) (*prepared, error) {
	out := &prepared{model: m, cols: map[string]any{}, raw: maps.Clone(values)}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		v := values[name]
		if isSystemField(name) {
			return nil, errorf(ErrInvalid, at{m.name, name}, "is set by the ORM and cannot be written")
		}
		f := m.fields[name]
		switch {
		case f == nil:
			return nil, errorf(ErrInvalid, at{m.name, name}, "no such field")
		case f.broken != "":
			return nil, errorf(ErrInvalid, at{m.name, name}, "cannot be written: %s", f.broken)
		case f.Kind == KindComputed || f.Kind == KindRelated:
			return nil, errorf(ErrInvalid, at{m.name, name}, "is %s and cannot be written", f.Kind)
		case f.Kind == KindOne2Many || f.Kind == KindMany2Many:
			if p.nested {
				return nil, errorf(ErrInvalid, at{m.name, name}, "x2many commands cannot nest inside another command")
			}
			cmds, err := p.commands(f, v)
			if err != nil {
				return nil, err
			}
			out.x2m = append(out.x2m, x2mChange{f: f, cmds: cmds})
		default:
			arg, err := toArg(f.Field, v)
			if err != nil {
				return nil, errorf(ErrInvalid, at{m.name, name}, "%v", err)
			}
			if arg == nil && f.Required {
				return nil, errorf(ErrInvalid, at{m.name, name}, "is required")
			}
			out.cols[name] = arg
		}
	}
	if create {
		if err := p.defaults(m, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// defaults fills the fields a create leaves out and checks required ones.
func (p preparer) defaults(m *model, out *prepared) error {
	for _, name := range m.names() {
		f := m.fields[name]
		if !f.stored() {
			continue
		}
		if _, given := out.cols[name]; given || name == p.except {
			continue
		}
		if f.Default != nil {
			v, err := defaultArg(f.Field, f.Default, p.op, p.s.now)
			if err != nil {
				return errorf(ErrInvalid, at{m.name, name}, "default: %v", err)
			}
			out.cols[name] = v
		}
		if out.cols[name] == nil && f.Required {
			return errorf(ErrInvalid, at{m.name, name}, "is required")
		}
	}
	return nil
}

// commands reads an x2many value: a bare list of ids (set) or a list of
// {op, id?, ids?, values?}.
func (p preparer) commands(f *field, v any) ([]command, error) {
	bad := func(format string, args ...any) error {
		return errorf(ErrInvalid, at{f.owner.name, f.name}, format, args...)
	}
	list, ok := v.([]any)
	if !ok {
		if ids, isIDs := v.([]int64); isIDs {
			return []command{{op: CmdSet, ids: ids}}, nil
		}
		return nil, bad("want a list of ids or of commands {op, id, ids, values}, got %s", kindOf(v))
	}
	if ids, all := idList(list); all {
		return []command{{op: CmdSet, ids: ids}}, nil
	}
	cmds := make([]command, 0, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, bad("command %d: want {op, id, ids, values}, got %s", i+1, kindOf(item))
		}
		c, err := p.command(f, obj)
		if err != nil {
			return nil, inCommand(err, i+1)
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

func idList(list []any) ([]int64, bool) {
	ids := make([]int64, 0, len(list))
	for _, v := range list {
		id, ok := asInt(v)
		if !ok || id < 1 {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

func (p preparer) command(f *field, obj map[string]any) (command, error) {
	c := command{}
	c.op, _ = obj["op"].(string)
	for k := range obj {
		if k != "op" && k != "id" && k != "ids" && k != "values" {
			return c, errorf(ErrInvalid, at{f.owner.name, f.name}, "unknown key %q (use op, id, ids, values)", k)
		}
	}
	needID := func() error {
		id, ok := asInt(obj["id"])
		if !ok || id < 1 {
			return errorf(ErrInvalid, at{f.owner.name, f.name}, "%s needs id, a record id of %s", c.op, f.Target)
		}
		c.id = id
		return nil
	}
	switch c.op {
	case CmdCreate, CmdUpdate:
		if c.op == CmdUpdate {
			if err := needID(); err != nil {
				return c, err
			}
		}
		vals, ok := obj["values"].(map[string]any)
		if !ok {
			return c, errorf(ErrInvalid, at{f.owner.name, f.name}, "%s needs values, an object", c.op)
		}
		if f.Kind == KindOne2Many {
			if _, set := vals[f.Inverse]; set {
				return c, errorf(ErrInvalid, at{f.owner.name, f.name}, "values may not set the inverse %s; the command does", f.Inverse)
			}
		}
		inner := p
		inner.nested = true
		if f.Kind == KindOne2Many {
			inner.except = f.Inverse
		}
		pv, err := inner.prepare(f.target, vals, c.op == CmdCreate)
		if err != nil {
			return c, err
		}
		c.values = pv
	case CmdDelete, CmdLink, CmdUnlink:
		return c, needID()
	case CmdSet:
		raw, _ := obj["ids"].([]any)
		ids, ok := idList(raw)
		if !ok || obj["ids"] == nil {
			return c, errorf(ErrInvalid, at{f.owner.name, f.name}, "set needs ids, a list of record ids of %s", f.Target)
		}
		c.ids = ids
	default:
		return c, errorf(ErrInvalid, at{f.owner.name, f.name}, "op %q must be create, update, delete, link, unlink or set", c.op)
	}
	return c, nil
}

// inCommand says which command an error is about, keeping the model and
// field it names.
func inCommand(err error, n int) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Msg = fmt.Sprintf("command %d: %s", n, e.Msg)
	return &c
}
