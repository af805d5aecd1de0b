package sqlstore

import "fmt"

// The contracts fix the Go types of result values; these accessors also
// accept the neighbouring types an engine may return for the same column
// (a text column read as bytes), and fail loudly on anything else.

func asInt64(v any) (int64, error) {
	if n, ok := v.(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("got %T, want int64", v)
}

func asString(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	}
	return "", fmt.Errorf("got %T, want string", v)
}

func asBytes(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case string:
		return []byte(b), nil
	case nil:
		return []byte{}, nil
	}
	return nil, fmt.Errorf("got %T, want []byte", v)
}
