package collections

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Items arrive as Go values from system plugins (Collection, *Collection,
// ...) or as decoded JSON from manifests and agent plugins; the JSON shapes
// are read with kernel.DecodeItem.

// parseCollection reads a CollectionPoint item and checks its shape.
func parseCollection(item any) (Collection, error) {
	c, err := kernel.ItemAs[Collection](item, "a collection is {name, fields}")
	if err != nil {
		return c, err
	}
	return c, checkCollection(c)
}

// parseFieldContribution reads a FieldPoint item and checks its shape.
func parseFieldContribution(item any) (FieldContribution, error) {
	fc, err := kernel.ItemAs[FieldContribution](item, "a collection field is {collection, field}")
	if err != nil {
		return fc, err
	}
	if err := checkName(fc.Collection); err != nil {
		return fc, err
	}
	return fc, checkField(fc.Field)
}

// hookItem is the JSON shape of a hook; the handler was taken out before
// decoding, so it only has to tolerate the key.
type hookItem struct {
	Collection string          `json:"collection"`
	On         Op              `json:"on"`
	When       When            `json:"when"`
	Handler    json.RawMessage `json:"handler"`
}

// parseHook reads a HookPoint item: a Hook with a Go handler, or the JSON
// shape whose handler is an agent plugin's function (a kernel.Func).
func parseHook(item any) (Hook, error) {
	var h Hook
	switch it := item.(type) {
	case Hook:
		h = it
	case *Hook:
		if it == nil {
			return h, fmt.Errorf("a hook is {collection, on, when?, handler}, got a nil *Hook")
		}
		h = *it
	case map[string]any:
		fn, ok := it["handler"].(kernel.Func)
		if !ok {
			return h, fmt.Errorf("hook handler must be a function")
		}
		var raw hookItem
		if err := kernel.DecodeItem(it, &raw); err != nil {
			return h, fmt.Errorf("a hook is {collection, on, when?, handler}: %w", err)
		}
		h = Hook{Collection: raw.Collection, On: raw.On, When: raw.When, Handler: agentHook(fn)}
	default:
		return h, fmt.Errorf("a hook is {collection, on, when?, handler}, got %T", item)
	}
	if h.When == "" {
		h.When = WhenAfter
	}
	return h, checkHook(h)
}

func checkHook(h Hook) error {
	if err := checkName(h.Collection); err != nil {
		return err
	}
	if !slices.Contains([]Op{OpCreate, OpUpdate, OpDelete}, h.On) {
		return fmt.Errorf("hook on %q must be one of create, update, delete", h.On)
	}
	if h.When != WhenBefore && h.When != WhenAfter {
		return fmt.Errorf("hook when %q must be before or after", h.When)
	}
	if h.Handler == nil {
		return fmt.Errorf("hook on %s of collection %q has no handler", h.On, h.Collection)
	}
	return nil
}

// agentHook adapts an agent plugin's function: the event crosses as a JSON
// snapshot, the result is ignored and a thrown error is the hook's error.
func agentHook(fn kernel.Func) HookFunc {
	return func(ctx context.Context, e HookEvent) error {
		_, err := fn(ctx, e)
		return err
	}
}

// checkName checks a collection name: an identifier short enough that its
// table name is one too.
func checkName(name string) error {
	if !contracts.ValidIdent(name) || len(name) > MaxNameLen {
		return fmt.Errorf("collection name %q must be a lowercase letter followed by up to %d lowercase letters, digits or underscores",
			name, MaxNameLen-1)
	}
	return nil
}

func checkCollection(c Collection) error {
	if err := checkName(c.Name); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, f := range c.Fields {
		if err := checkField(f); err != nil {
			return fmt.Errorf("collection %q: %w", c.Name, err)
		}
		if seen[f.Name] {
			return fmt.Errorf("collection %q: field %q is listed twice", c.Name, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

var fieldTypes = []FieldType{TypeText, TypeInteger, TypeReal, TypeBoolean, TypeJSON}

func checkField(f Field) error {
	if !contracts.ValidIdent(f.Name) {
		return fmt.Errorf("field name %q must be a lowercase letter followed by up to 40 lowercase letters, digits or underscores", f.Name)
	}
	if isSystemColumn(f.Name) {
		return fmt.Errorf("field name %q is reserved for the column every collection has", f.Name)
	}
	if !slices.Contains(fieldTypes, f.Type) {
		names := make([]string, len(fieldTypes))
		for i, t := range fieldTypes {
			names[i] = string(t)
		}
		return fmt.Errorf("field %q: type %q must be one of %s", f.Name, f.Type, strings.Join(names, ", "))
	}
	if f.Default != nil {
		if _, err := toArg(f, f.Default); err != nil {
			return fmt.Errorf("default of %w", err)
		}
	}
	return nil
}

func isSystemColumn(name string) bool {
	return name == ColumnID || name == ColumnCreatedAt || name == ColumnUpdatedAt
}
