package adminv1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Declaration is a manifest's declaration in the form a person reviews:
// the points, scopes and keys the plugin may use and the items it
// contributes declaratively. Lists are sorted; an empty list is left out.
// An Approval object shows the same (its spec.declaration), and the
// console shows it for each pending approval.
type Declaration struct {
	// Points are the points the plugin may contribute to: its manifest's
	// points and those its contributes has items for.
	Points []string `json:"points,omitempty"`
	// Scopes are the capabilities it asks for, such as net.
	Scopes []string `json:"scopes,omitempty"`
	// Inject are the keys it needs to run.
	Inject []string `json:"inject,omitempty"`
	// Optional are the keys it uses when present.
	Optional []string `json:"optional,omitempty"`
	// Provide are the keys it may provide.
	Provide []string `json:"provide,omitempty"`
	// Routes are the routes its manifest contributes, as "METHOD /path".
	Routes []string `json:"routes,omitempty"`
	// Schedules are the jobs its manifest contributes, as "name every
	// 1h0m0s".
	Schedules []string `json:"schedules,omitempty"`
	// Contributions are its manifest's other declarative items, one
	// "point: item" each, the item as compact JSON.
	Contributions []string `json:"contributions,omitempty"`
}

// DeclarationOf is manifest m's declaration: the one conversion from a
// manifest to a Declaration. Two manifests the kernel would hold to the
// same points, scopes, keys and declarative items give equal
// Declarations, whatever the order of their lists.
func DeclarationOf(m Manifest) Declaration {
	d := Declaration{Points: m.DeclaredPoints(), Scopes: m.Scopes, Inject: m.Inject,
		Optional: m.Optional, Provide: m.Provide}
	for point, items := range m.Contributes {
		for _, item := range items {
			switch s, kind := itemText(point, item); kind {
			case RoutePoint:
				d.Routes = append(d.Routes, s)
			case SchedulePoint:
				d.Schedules = append(d.Schedules, s)
			default:
				d.Contributions = append(d.Contributions, s)
			}
		}
	}
	return d.Normal()
}

// Normal is d with every list sorted (a copy), the keys and points once
// each, and empty lists dropped, so that equal declarations compare equal
// however they were written.
func (d Declaration) Normal() Declaration {
	norm := func(in []string) []string {
		if len(in) == 0 {
			return nil
		}
		out := slices.Clone(in)
		slices.Sort(out)
		return out
	}
	return Declaration{Points: slices.Compact(norm(d.Points)), Scopes: slices.Compact(norm(d.Scopes)),
		Inject: slices.Compact(norm(d.Inject)), Optional: slices.Compact(norm(d.Optional)),
		Provide: slices.Compact(norm(d.Provide)), Routes: norm(d.Routes), Schedules: norm(d.Schedules),
		Contributions: norm(d.Contributions)}
}

// itemText is a contributed item in a line, and the list it belongs to:
// a route as "GET /path", a job as "name every 1m0s", anything else (or a
// route or job with fields those forms leave out) as "point: {json}".
func itemText(point string, item any) (string, string) {
	obj, _ := item.(map[string]any)
	switch point {
	case RoutePoint:
		method, okM := obj["method"].(string)
		path, okP := obj["path"].(string)
		if okM && okP && onlyKeys(obj, "method", "path", "handler") {
			return strings.ToUpper(method) + " " + path, point
		}
	case SchedulePoint:
		name, okN := obj["name"].(string)
		every, okE := millis(obj["everyMs"])
		if okN && okE && onlyKeys(obj, "name", "everyMs", "handler") {
			return fmt.Sprintf("%s every %s", name, time.Duration(every)*time.Millisecond), point
		}
	}
	raw, err := json.Marshal(item) // maps marshal with sorted keys: one text per item
	if err != nil {
		raw = []byte(fmt.Sprint(item))
	}
	return point + ": " + string(raw), ""
}

// millis reads a whole number of milliseconds: a float64 from JSON, or an
// integer from a manifest built in Go.
func millis(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n == float64(int64(n))
	case int:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// onlyKeys reports whether obj has no key but keys.
func onlyKeys(obj map[string]any, keys ...string) bool {
	for k := range obj {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}
