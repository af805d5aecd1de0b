package contracts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sms-baseline/sms/kernel"
)

// ObjectsKey is the key whose value is the tenant's ObjectStore. The host
// provides it; it is system-only both ways (ObjectsKeyMeta): agent code
// reaches objects only through what a system plugin exposes.
const ObjectsKey = "objects"

// Bounds of keys and listings.
const (
	// MaxKeyLen is the longest object key, in bytes: S3's limit of 1024
	// less room for a store's own prefix in a shared bucket.
	MaxKeyLen = 896
	// MaxStorePrefixLen is the longest prefix a store may put before keys.
	MaxStorePrefixLen = 1024 - MaxKeyLen
	// MaxListPage is the most objects one List answers.
	MaxListPage = 1000
	// DefaultListPage is the page size when ListOptions.Limit is zero.
	DefaultListPage = 100
)

// Errors an ObjectStore wraps; branch with errors.Is.
var (
	// ErrObjectNotFound: no object has that key.
	ErrObjectNotFound = errors.New("object not found")
	// ErrInvalidKey: the key is not a valid object key (CheckKey).
	ErrInvalidKey = errors.New("invalid object key")
	// ErrInvalidRange: the range is not within the object.
	ErrInvalidRange = errors.New("invalid range")
	// ErrSizeMismatch: a put's body was not the size it declared; nothing
	// was stored.
	ErrSizeMismatch = errors.New("object size mismatch")
	// ErrInvalidList: a listing's limit is negative or past MaxListPage.
	ErrInvalidList = errors.New("invalid listing")
	// ErrKeyConflict: the store keeps objects as files and folders (a
	// filesystem-backed service) and refused a key that is a folder of
	// another object's key, or has an object's key as a folder ("a" and
	// "a/b"). Stores that are not so refuse nothing of the kind; code that
	// wants to run on every store never makes such keys.
	ErrKeyConflict = errors.New("object key conflict")
)

// CheckList refuses a listing's options: a bad prefix, or a limit that is
// negative or past MaxListPage. It returns the limit to use.
func CheckList(opts ListOptions) (int, error) {
	if err := CheckPrefix(opts.Prefix); err != nil {
		return 0, err
	}
	switch {
	case opts.Limit < 0 || opts.Limit > MaxListPage:
		return 0, fmt.Errorf("%w: limit %d must be from 1 to %d (0 for %d)", ErrInvalidList, opts.Limit, MaxListPage, DefaultListPage)
	case opts.Limit == 0:
		return DefaultListPage, nil
	}
	return opts.Limit, nil
}

// CheckRange refuses a get's range for an object of size bytes and returns
// the offset and length to read.
func CheckRange(opts GetOptions, size int64) (int64, int64, error) {
	switch {
	case opts.Offset < 0 || opts.Length < 0:
		return 0, 0, fmt.Errorf("%w: offset %d and length %d must not be negative", ErrInvalidRange, opts.Offset, opts.Length)
	case opts.Offset > size || (opts.Offset == size && size > 0):
		return 0, 0, fmt.Errorf("%w: offset %d is past the object's %d bytes", ErrInvalidRange, opts.Offset, size)
	}
	n := size - opts.Offset
	if opts.Length > 0 && opts.Length < n {
		n = opts.Length
	}
	return opts.Offset, n, nil
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key         string `json:"key"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType,omitempty"`
	// ETag identifies the content: two objects with the same ETag hold
	// the same bytes in one store (it differs between drivers).
	ETag     string    `json:"etag,omitempty"`
	Modified time.Time `json:"modified"`
}

// PutOptions describe a put's body.
type PutOptions struct {
	// Size is the body's length in bytes, required; a body of another
	// length is refused with ErrSizeMismatch and nothing is stored.
	Size        int64
	ContentType string
}

// GetOptions choose the bytes a get answers: Length bytes from Offset, the
// whole object when both are zero, to its end when Length is zero.
type GetOptions struct {
	Offset, Length int64
}

// ListOptions page a listing: the keys starting with Prefix, in byte
// order, after the key After (the last key of the previous page).
type ListOptions struct {
	Prefix string
	After  string
	Limit  int
}

// ListPage is one page of a listing; More says whether keys follow the
// last one.
type ListPage struct {
	Objects []ObjectInfo `json:"objects"`
	More    bool         `json:"more"`
}

// ObjectStore is what an object storage driver provides: a flat map of
// keys (CheckKey) to byte strings with a content type, for files too large
// for a row.
//
// Concurrency: an ObjectStore is safe for concurrent use. A Put is atomic:
// a Get, Head or List sees an object's previous content or its new one,
// never a part; of two Puts of one key at once, one wins whole. A Put that
// fails or is cancelled leaves the previous object (or none) as it was.
//
// Retries: Get, Head and List may be retried. A Put may be retried with
// the same body (the object ends the same). A Delete may be retried: of a
// missing object it is not an error.
type ObjectStore interface {
	// Put stores body under key, replacing any object there.
	Put(ctx context.Context, key string, body io.Reader, opts PutOptions) (ObjectInfo, error)
	// Get returns the object's info and a reader of the bytes opts choose;
	// the caller closes it. ErrObjectNotFound when no object has key,
	// ErrInvalidRange when the range starts past its end.
	Get(ctx context.Context, key string, opts GetOptions) (ObjectInfo, io.ReadCloser, error)
	// Head returns the object's info.
	Head(ctx context.Context, key string) (ObjectInfo, error)
	// Delete removes the object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// List answers a page of the objects whose keys start with a prefix.
	List(ctx context.Context, opts ListOptions) (ListPage, error)
}

// ObjectsKeyMeta is the trust of ObjectsKey: only system fibers provide or
// read the object store.
var ObjectsKeyMeta = kernel.KeyMeta{
	Description:      "the tenant's object store (contracts.ObjectStore)",
	MinProviderTrust: kernel.TrustSystem,
	MinConsumerTrust: kernel.TrustSystem,
}

// CheckKey refuses a key that is not a valid object key: empty, longer
// than MaxKeyLen, not UTF-8, with a control character or a backslash,
// starting or ending with "/", with an empty segment ("a//b") or a "." or
// ".." segment. Such keys mean different objects to different stores, or
// paths outside a directory to the filesystem driver.
func CheckKey(key string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidKey, clip(key), why) }
	switch {
	case key == "":
		return fmt.Errorf("%w: the key is empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	case !utf8.ValidString(key):
		return bad("not UTF-8")
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' || (r >= 0x80 && r < 0xa0) {
			return bad("a control character or a backslash")
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return bad("an empty segment (a leading, trailing or double /)")
		case ".", "..":
			return bad(`a "." or ".." segment`)
		}
	}
	return nil
}

// CheckPrefix refuses a listing prefix no valid key starts with: one that
// CheckKey refuses with a character after it. The empty prefix lists
// everything.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := CheckKey(prefix + "x"); err != nil {
		return fmt.Errorf("prefix %q: %w", clip(prefix), err)
	}
	return nil
}

// clip shortens a key for an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "..."
}
