package orm

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Decoders of JSON arguments, shared by the REST API and UserKey. Each
// error names the argument and what it should be.

func argErr(format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

func decodeDomain(v any) (Domain, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, argErr("domain must be a list in prefix notation, such as [[\"state\", \"=\", \"draft\"]], got %s", kindOf(v))
	}
	return Domain(list), nil
}

func decodeIDs(v any) ([]int64, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, argErr("ids must be a list of record ids, got %s", kindOf(v))
	}
	ids, ok := idList(list)
	if !ok {
		return nil, argErr("ids must be whole numbers from 1")
	}
	return ids, nil
}

func decodeSpec(v any) (ReadSpec, error) {
	return decodeSpecDepth(v, 0)
}

func decodeSpecDepth(v any, depth int) (ReadSpec, error) {
	if v == nil {
		return nil, nil
	}
	if depth > MaxSpecDepth {
		return nil, argErr("spec nests deeper than %d relations", MaxSpecDepth)
	}
	if list, ok := v.([]any); ok { // a list of field names
		spec := ReadSpec{}
		for _, x := range list {
			name, ok := x.(string)
			if !ok {
				return nil, argErr("spec lists field names, got %s", kindOf(x))
			}
			spec[name] = ReadSpec{}
		}
		return spec, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, argErr("spec must be an object {field: {nested spec}} or a list of field names, got %s", kindOf(v))
	}
	spec := make(ReadSpec, len(m))
	for k, sub := range m {
		nested, err := decodeSpecDepth(sub, depth+1)
		if err != nil {
			return nil, err
		}
		spec[k] = nested
	}
	return spec, nil
}

func decodeValues(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, argErr("values must be an object of field values, got %s", kindOf(v))
	}
	return m, nil
}

// object reads an optional object argument with only the given keys.
func object(v any, what string, keys ...string) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, argErr("%s must be an object, got %s", what, kindOf(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(keys, k) {
			return nil, argErr("%s: unknown key %q (use %s)", what, k, strings.Join(keys, ", "))
		}
	}
	return m, nil
}

func decodeInt(m map[string]any, key string) (int, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, argErr("%s must be a whole number, got %s", key, kindOf(v))
	}
	return int(n), nil
}

func decodeOptions(v any) (SearchOptions, error) {
	m, err := object(v, "search options", "limit", "offset", "order")
	if err != nil {
		return SearchOptions{}, err
	}
	var o SearchOptions
	if o.Limit, err = decodeInt(m, "limit"); err != nil {
		return o, err
	}
	if o.Offset, err = decodeInt(m, "offset"); err != nil {
		return o, err
	}
	if s, ok := m["order"].(string); ok {
		o.Order = s
	} else if m["order"] != nil {
		return o, argErr("order must be a string such as \"number desc\"")
	}
	return o, nil
}

func decodeGroup(v any) (GroupRequest, error) {
	m, err := object(v, "read_group request", "domain", "groupBy", "aggregates", "limit")
	if err != nil {
		return GroupRequest{}, err
	}
	var g GroupRequest
	if g.Domain, err = decodeDomain(m["domain"]); err != nil {
		return g, err
	}
	if raw, ok := m["groupBy"].([]any); ok {
		for _, x := range raw {
			s, ok := x.(string)
			if !ok {
				return g, argErr("groupBy lists field names, got %s", kindOf(x))
			}
			g.GroupBy = append(g.GroupBy, s)
		}
	} else if m["groupBy"] != nil {
		return g, argErr("groupBy must be a list of field names")
	}
	if raw, ok := m["aggregates"].(map[string]any); ok {
		g.Aggregates = map[string]string{}
		for k, x := range raw {
			s, ok := x.(string)
			if !ok {
				return g, argErr("aggregate %s must be a string such as \"sum:total\"", k)
			}
			g.Aggregates[k] = s
		}
	} else if m["aggregates"] != nil {
		return g, argErr("aggregates must be an object {name: \"sum:field\"}")
	}
	g.Limit, err = decodeInt(m, "limit")
	return g, err
}
