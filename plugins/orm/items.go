package orm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Items arrive as Go values from system plugins or as decoded JSON from
// manifests and agent plugins, whose functions are kernel.Func values; the
// JSON shapes are read with kernel.DecodeItem.

// parseModel reads a ModelPoint item and checks its shape.
func parseModel(item any) (Model, error) {
	m, err := kernel.ItemAs[Model](item, "a model is {name, fields, displayField?, order?}")
	if err != nil {
		return m, err
	}
	m.Fields = maps.Clone(m.Fields)
	return m, checkModel(m)
}

// parseFieldContribution reads a FieldPoint item and checks its shape.
func parseFieldContribution(item any) (FieldContribution, error) {
	fc, err := kernel.ItemAs[FieldContribution](item, "a model field is {model, name, field}")
	if err != nil {
		return fc, err
	}
	if err := checkModelName(fc.Model); err != nil {
		return fc, err
	}
	return fc, checkField(fc.Model, fc.Name, fc.Field)
}

// fnItem is the JSON shape of an agent plugin's method, hook or onchange;
// the handler was taken out before decoding.
type fnItem struct {
	Model   string          `json:"model"`
	Name    string          `json:"name"`
	On      Event           `json:"on"`
	When    When            `json:"when"`
	Field   string          `json:"field"`
	Handler json.RawMessage `json:"handler"`
}

// parseFnItem decodes an agent plugin's item and returns its function.
func parseFnItem(it map[string]any, shape string) (fnItem, kernel.Func, error) {
	var raw fnItem
	fn, ok := it["handler"].(kernel.Func)
	if !ok {
		return raw, nil, fmt.Errorf("%s: handler must be a function", shape)
	}
	if err := kernel.DecodeItem(it, &raw); err != nil {
		return raw, nil, fmt.Errorf("%s: %w", shape, err)
	}
	return raw, fn, nil
}

// parseMethod reads a MethodPoint item.
func parseMethod(item any) (Method, error) {
	const shape = "a model method is {model, name, handler}"
	var m Method
	switch it := item.(type) {
	case Method:
		m = it
	case *Method:
		if it == nil {
			return m, fmt.Errorf("%s, got a nil *Method", shape)
		}
		m = *it
	case map[string]any:
		raw, fn, err := parseFnItem(it, shape)
		if err != nil {
			return m, err
		}
		m = Method{Model: raw.Model, Name: raw.Name, Handler: agentMethod(fn)}
	default:
		return m, fmt.Errorf("%s, got %T", shape, item)
	}
	if err := checkModelName(m.Model); err != nil {
		return m, err
	}
	if !contracts.ValidIdent(m.Name) {
		return m, errorf(ErrInvalid, at{m.Model, ""}, "method name %q must be a lowercase identifier", m.Name)
	}
	if m.Handler == nil {
		return m, errorf(ErrInvalid, at{m.Model, ""}, "method %s has no handler", m.Name)
	}
	return m, nil
}

// parseHook reads a HookPoint item.
func parseHook(item any) (Hook, error) {
	const shape = "a model hook is {model, on, when?, handler}"
	var h Hook
	switch it := item.(type) {
	case Hook:
		h = it
	case *Hook:
		if it == nil {
			return h, fmt.Errorf("%s, got a nil *Hook", shape)
		}
		h = *it
	case map[string]any:
		raw, fn, err := parseFnItem(it, shape)
		if err != nil {
			return h, err
		}
		h = Hook{Model: raw.Model, On: raw.On, When: raw.When, Handler: agentHook(fn)}
	default:
		return h, fmt.Errorf("%s, got %T", shape, item)
	}
	if h.When == "" {
		h.When = WhenAfter
	}
	if err := checkModelName(h.Model); err != nil {
		return h, err
	}
	if !slices.Contains([]Event{EventCreate, EventWrite, EventUnlink}, h.On) {
		return h, errorf(ErrInvalid, at{h.Model, ""}, "hook on %q must be create, write or unlink", h.On)
	}
	if h.When != WhenBefore && h.When != WhenAfter {
		return h, errorf(ErrInvalid, at{h.Model, ""}, "hook when %q must be before or after", h.When)
	}
	if h.Handler == nil {
		return h, errorf(ErrInvalid, at{h.Model, ""}, "hook on %s has no handler", h.On)
	}
	return h, nil
}

// parseOnchange reads an OnchangePoint item.
func parseOnchange(item any) (Onchange, error) {
	const shape = "a model onchange is {model, field, handler}"
	var o Onchange
	switch it := item.(type) {
	case Onchange:
		o = it
	case *Onchange:
		if it == nil {
			return o, fmt.Errorf("%s, got a nil *Onchange", shape)
		}
		o = *it
	case map[string]any:
		raw, fn, err := parseFnItem(it, shape)
		if err != nil {
			return o, err
		}
		o = Onchange{Model: raw.Model, Field: raw.Field, Handler: agentOnchange(fn)}
	default:
		return o, fmt.Errorf("%s, got %T", shape, item)
	}
	if err := checkModelName(o.Model); err != nil {
		return o, err
	}
	if !contracts.ValidIdent(o.Field) {
		return o, errorf(ErrInvalid, at{o.Model, o.Field}, "onchange field must be a field name")
	}
	if o.Handler == nil {
		return o, errorf(ErrInvalid, at{o.Model, o.Field}, "onchange has no handler")
	}
	return o, nil
}

// Agent functions receive JSON only: the kernel snapshots the arguments,
// and no Service, database or Go value crosses.

// Their ctx carries the operation's user with sudo off, whatever the
// operation that calls them: what they call back through UserKey acts as
// that user, never as sudo.

func agentMethod(fn kernel.Func) MethodFunc {
	return func(ctx context.Context, c MethodCall) (any, error) {
		c.Op.Sudo = false
		env := map[string]any{"model": c.Model, "ctx": c.Op}
		return fn(WithOp(ctx, c.Op), env, c.IDs, map[string]any{"records": c.Records, "args": c.Args})
	}
}

func agentHook(fn kernel.Func) HookFunc {
	return func(ctx context.Context, c Change) error {
		c.Op.Sudo = false
		_, err := fn(WithOp(ctx, actingOp(ctx, c.Op)), c)
		return err
	}
}

func agentOnchange(fn kernel.Func) OnchangeFunc {
	return func(ctx context.Context, e OnchangeEvent) (map[string]any, error) {
		e.Op.Sudo = false
		out, err := fn(WithOp(ctx, e.Op), e)
		if err != nil || out == nil {
			return nil, err
		}
		m, ok := out.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("onchange of %s.%s answered %T, not an object of values", e.Model, e.Field, out)
		}
		return m, nil
	}
}

func checkModelName(name string) error {
	if !contracts.ValidIdent(name) || len(name) > MaxNameLen {
		return &Error{Kind: ErrInvalid, Model: fmt.Sprintf("%q", name),
			Msg: fmt.Sprintf("a model name must be a lowercase letter followed by up to %d lowercase letters, digits or underscores", MaxNameLen-1)}
	}
	return nil
}

func checkModel(m Model) error {
	if err := checkModelName(m.Name); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(m.Fields)) {
		if err := checkField(m.Name, name, m.Fields[name]); err != nil {
			return err
		}
	}
	if m.DisplayField != "" {
		if _, ok := m.Fields[m.DisplayField]; !ok {
			return errorf(ErrInvalid, at{m.Name, m.DisplayField}, "displayField names no field of the model")
		}
	}
	if m.Order != "" {
		if _, err := parseOrder(m.Order); err != nil {
			return errorf(ErrInvalid, at{m.Name, ""}, "order: %v", err)
		}
	}
	return nil
}

var kinds = []Kind{KindChar, KindText, KindInt, KindFloat, KindBool, KindDate, KindDatetime, KindJSON, KindBinary,
	KindSelection, KindMany2One, KindOne2Many, KindMany2Many, KindComputed, KindRelated}

func isSystemField(name string) bool {
	switch name {
	case FieldID, FieldDisplay, FieldCreatedAt, FieldUpdatedAt, FieldCreatedBy, FieldUpdatedBy:
		return true
	}
	return false
}

// checkField checks one field's declaration on its own; references to
// other models are resolved later, when both are declared.
func checkField(model, name string, f Field) error {
	bad := func(format string, args ...any) error { return errorf(ErrInvalid, at{model, name}, format, args...) }
	if !contracts.ValidIdent(name) {
		return errorf(ErrInvalid, at{model, fmt.Sprintf("%q", name)}, "a field name must be a lowercase letter followed by up to 40 lowercase letters, digits or underscores")
	}
	if isSystemField(name) {
		return bad("the name is reserved for a field every model has")
	}
	if !slices.Contains(kinds, f.Kind) {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		return bad("kind %q must be one of %s", f.Kind, strings.Join(names, ", "))
	}
	if err := checkKindAttrs(model, name, f); err != nil {
		return err
	}
	if f.Required && !stored(f.Kind) {
		return bad("a %s field cannot be required", f.Kind)
	}
	if f.Default != nil {
		if !stored(f.Kind) {
			return bad("a %s field cannot have a default", f.Kind)
		}
		if _, err := defaultArg(f, f.Default, OpContext{}, fixedNow); err != nil {
			return bad("default: %v", err)
		}
	}
	return nil
}

func checkKindAttrs(model, name string, f Field) error {
	bad := func(format string, args ...any) error { return errorf(ErrInvalid, at{model, name}, format, args...) }
	switch f.Kind {
	case KindSelection:
		if len(f.Options) == 0 {
			return bad("a selection needs options [{value, label?}]")
		}
		seen := map[string]bool{}
		for _, o := range f.Options {
			if o.Value == "" || seen[o.Value] {
				return bad("selection option %q is empty or listed twice", o.Value)
			}
			seen[o.Value] = true
		}
	case KindMany2One, KindOne2Many, KindMany2Many:
		if err := checkModelName(f.Target); err != nil {
			return bad("target: %v", err)
		}
		if f.Kind == KindMany2One && !slices.Contains([]OnDelete{"", OnDeleteRestrict, OnDeleteCascade, OnDeleteSetNull}, f.OnDelete) {
			return bad("onDelete %q must be restrict, cascade or set null", f.OnDelete)
		}
		if f.Kind == KindMany2One && f.Required && f.OnDelete == OnDeleteSetNull {
			return bad("a required many2one cannot be set null when its target goes; use restrict or cascade")
		}
		if f.Kind == KindOne2Many && !contracts.ValidIdent(f.Inverse) {
			return bad("a one2many needs inverse: the many2one field of %s that points back", f.Target)
		}
	case KindComputed:
		if !contracts.ValidIdent(f.Compute) {
			return bad("a computed field needs compute: the name of a model-method of %s", model)
		}
		if !stored(f.Returns) || f.Returns == KindMany2One || f.Returns == KindSelection {
			return bad("returns %q must be a scalar kind (char, text, int, float, bool, date, datetime, json)", f.Returns)
		}
	case KindRelated:
		if parts := strings.Split(f.Path, "."); len(parts) < 2 || slices.ContainsFunc(parts, func(p string) bool { return !contracts.ValidIdent(p) }) {
			return bad("a related field needs path: many2one fields then a field, such as partner.email")
		}
	}
	return nil
}

// stored reports whether fields of kind k have a column.
func stored(k Kind) bool {
	switch k {
	case KindOne2Many, KindMany2Many, KindComputed, KindRelated, "":
		return false
	}
	return true
}
