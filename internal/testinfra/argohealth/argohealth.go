package argohealth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Status is a health check's answer, as Argo CD reads it.
type Status struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// codes are Argo CD's health codes; any other answer is an error.
var codes = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// Root is the directory holding the checks, in Argo CD's
// resource_customizations layout: <group>/<Kind>/health.lua.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "argocd", "resource_customizations")
}

// Script returns the health check of group and kind.
func Script(group, kind string) (string, error) {
	b, err := os.ReadFile(filepath.Join(Root(), group, kind, "health.lua"))
	if err != nil {
		return "", fmt.Errorf("health check of %s/%s: %w", group, kind, err)
	}
	return string(b), nil
}

// Check runs the health check of obj's group and kind on obj.
func Check(obj *unstructured.Unstructured) (Status, error) {
	gvk := obj.GroupVersionKind()
	script, err := Script(gvk.Group, gvk.Kind)
	if err != nil {
		return Status{}, err
	}
	return Run(script, obj.Object)
}

// Run evaluates script on obj as Argo CD does.
func Run(script string, obj map[string]any) (Status, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.LoadLibName: lua.OpenPackage, lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable} {
		l.Push(l.NewFunction(open))
		l.Push(lua.LString(name))
		l.Call(1, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decode(l, obj))
	if err := l.DoString(script); err != nil {
		return Status{}, fmt.Errorf("health check: %w", err)
	}
	tbl, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Status{}, fmt.Errorf("health check returned %s, want a table", l.Get(-1).Type())
	}
	st := Status{Status: lua.LVAsString(tbl.RawGetString("status")), Message: lua.LVAsString(tbl.RawGetString("message"))}
	if !codes[st.Status] {
		return st, fmt.Errorf("health check returned status %q, which Argo CD does not know", st.Status)
	}
	return st, nil
}

// decode turns an unstructured value into Lua as Argo CD does: maps and
// slices become tables, numbers LNumber; a value of any other Go type
// (an int rather than an int64, say) becomes nil there too.
func decode(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(decode(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, decode(l, item))
		}
		return t
	}
	return lua.LNil
}
