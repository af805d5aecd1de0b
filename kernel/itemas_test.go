package kernel_test

import (
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

type shapeItem struct {
	Name string `json:"name"`
}

// TestItemAsReadsEveryForm: a value, a pointer and the JSON shape read the
// same; a nil pointer and an unknown key are errors naming the shape.
// Dropping the nil check panics here; decoding without DecodeItem's
// unknown-key refusal lets "title" through.
func TestItemAsReadsEveryForm(t *testing.T) {
	for _, item := range []any{shapeItem{"a"}, &shapeItem{"a"}, map[string]any{"name": "a"}} {
		got, err := kernel.ItemAs[shapeItem](item, "an item is {name}")
		if err != nil || got.Name != "a" {
			t.Errorf("ItemAs(%#v) = %+v, %v; want {a}", item, got, err)
		}
	}
	for _, item := range []any{(*shapeItem)(nil), map[string]any{"title": "a"}} {
		_, err := kernel.ItemAs[shapeItem](item, "an item is {name}")
		if err == nil || !strings.HasPrefix(err.Error(), "an item is {name}") {
			t.Errorf("ItemAs(%#v) error = %v, want one naming the shape", item, err)
		}
	}
}
