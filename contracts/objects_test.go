package contracts_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sms-baseline/sms/contracts"
)

// TestCheckKey: keys that would mean different objects to different
// stores, or a path outside its directory to the filesystem driver, are
// refused. Seen failing with the segment check removed ("a/../b" passed).
func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "a/b", "invoices/2026/INV-1.pdf", "é/ü", "a.b/.c/..d", strings.Repeat("k", contracts.MaxKeyLen)} {
		if err := contracts.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range []string{"", "/a", "a/", "a//b", ".", "..", "a/../b", "./a", "a/.", "a\\b", "a\x00b", "a\nb", "a\x7fb", "\xff",
		strings.Repeat("k", contracts.MaxKeyLen+1)} {
		if err := contracts.CheckKey(k); !errors.Is(err, contracts.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	for p, ok := range map[string]bool{"": true, "a": true, "a/": true, "a/.": true, "../": false, "a//": false, "/": false} {
		if err := contracts.CheckPrefix(p); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
}

// FuzzCheckKey: an accepted key is UTF-8 of at most MaxKeyLen bytes with
// no control character, no backslash, and only segments that are neither
// empty, "." nor "..": a filesystem path joined under a root stays under
// it.
func FuzzCheckKey(f *testing.F) {
	for _, seed := range []string{"a/b", "../x", "a//b", "a\\b", "x/./y", "\x00", "é"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if contracts.CheckKey(key) != nil {
			return
		}
		if len(key) > contracts.MaxKeyLen || !utf8.ValidString(key) || strings.ContainsAny(key, "\\\x00\n\r\x7f") {
			t.Fatalf("accepted %q", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q with segment %q", key, seg)
			}
		}
	})
}
