package objectstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// Run runs the suite on stores open makes: a new, empty store for each
// test (or an empty prefix of one).
func Run(t *testing.T, open func(t *testing.T) contracts.ObjectStore) {
	tests := []struct {
		name string
		run  func(t *testing.T, st contracts.ObjectStore)
	}{
		{"PutGetHead", testPutGetHead},
		{"Overwrite", testOverwrite},
		{"Ranges", testRanges},
		{"Missing", testMissing},
		{"SizeMismatch", testSizeMismatch},
		{"FailedBody", testFailedBody},
		{"InvalidKeys", testInvalidKeys},
		{"List", testList},
		{"Folders", testFolders},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Large", testLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

// content is an object to put.
type content struct {
	key   string
	body  []byte
	ctype string
}

func put(t *testing.T, st contracts.ObjectStore, c content) contracts.ObjectInfo {
	t.Helper()
	info, err := st.Put(context.Background(), c.key, bytes.NewReader(c.body), contracts.PutOptions{Size: int64(len(c.body)), ContentType: c.ctype})
	if err != nil {
		t.Fatalf("put %s: %v", c.key, err)
	}
	return info
}

func get(t *testing.T, st contracts.ObjectStore, key string, opts contracts.GetOptions) (contracts.ObjectInfo, []byte, error) {
	t.Helper()
	info, rc, err := st.Get(context.Background(), key, opts)
	if err != nil {
		return info, nil, err
	}
	defer func() { _ = rc.Close() }()
	body, err := io.ReadAll(rc)
	return info, body, err
}

// testPutGetHead: what was put comes back, bytes, size, type and ETag,
// and an empty object is an object.
func testPutGetHead(t *testing.T, st contracts.ObjectStore) {
	in := put(t, st, content{"invoices/2026/INV-1.pdf", []byte("%PDF-1.7 hello"), "application/pdf"})
	if in.Key != "invoices/2026/INV-1.pdf" || in.Size != 14 || in.ContentType != "application/pdf" || in.ETag == "" || in.Modified.IsZero() {
		t.Fatalf("put answered %+v", in)
	}
	info, body, err := get(t, st, in.Key, contracts.GetOptions{})
	if err != nil || string(body) != "%PDF-1.7 hello" || info.Size != 14 || info.ContentType != "application/pdf" || info.ETag != in.ETag {
		t.Fatalf("get = %+v %q %v", info, body, err)
	}
	head, err := st.Head(context.Background(), in.Key)
	if err != nil || head.Size != 14 || head.ETag != in.ETag || head.ContentType != "application/pdf" {
		t.Fatalf("head = %+v %v", head, err)
	}
	put(t, st, content{"empty", nil, ""})
	if info, body, err := get(t, st, "empty", contracts.GetOptions{}); err != nil || len(body) != 0 || info.Size != 0 {
		t.Fatalf("empty object: %+v %q %v", info, body, err)
	}
}

func testOverwrite(t *testing.T, st contracts.ObjectStore) {
	a := put(t, st, content{"k", []byte("first"), "text/plain"})
	b := put(t, st, content{"k", []byte("second!"), "text/markdown"})
	if _, body, err := get(t, st, "k", contracts.GetOptions{}); err != nil || string(body) != "second!" {
		t.Fatalf("after overwrite: %q %v", body, err)
	}
	if a.ETag == b.ETag {
		t.Fatalf("two contents share the ETag %s", a.ETag)
	}
}

// testRanges: a range answers its bytes; one starting past the end is
// refused with ErrInvalidRange.
func testRanges(t *testing.T, st contracts.ObjectStore) {
	put(t, st, content{"r", []byte("0123456789"), ""})
	for _, c := range []struct {
		opts contracts.GetOptions
		want string
	}{
		{contracts.GetOptions{Offset: 2, Length: 3}, "234"},
		{contracts.GetOptions{Offset: 7}, "789"},
		{contracts.GetOptions{Length: 4}, "0123"},
		{contracts.GetOptions{Offset: 8, Length: 10}, "89"},
	} {
		if _, body, err := get(t, st, "r", c.opts); err != nil || string(body) != c.want {
			t.Errorf("range %+v = %q %v, want %q", c.opts, body, err, c.want)
		}
	}
	for _, o := range []contracts.GetOptions{{Offset: 10}, {Offset: 11, Length: 1}, {Offset: -1}} {
		if _, _, err := get(t, st, "r", o); !errors.Is(err, contracts.ErrInvalidRange) {
			t.Errorf("range %+v: %v, want ErrInvalidRange", o, err)
		}
	}
}

func testMissing(t *testing.T, st contracts.ObjectStore) {
	if _, _, err := get(t, st, "nope", contracts.GetOptions{}); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Errorf("get missing: %v", err)
	}
	if _, err := st.Head(context.Background(), "nope"); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Errorf("head missing: %v", err)
	}
	if err := st.Delete(context.Background(), "nope"); err != nil {
		t.Errorf("delete missing: %v", err)
	}
	put(t, st, content{"gone", []byte("x"), ""})
	if err := st.Delete(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Head(context.Background(), "gone"); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Errorf("head after delete: %v", err)
	}
}

// testSizeMismatch: a body shorter or longer than declared stores
// nothing, and leaves the previous object whole.
func testSizeMismatch(t *testing.T, st contracts.ObjectStore) {
	put(t, st, content{"kept", []byte("previous"), ""})
	for _, c := range []struct {
		body string
		size int64
	}{{"short", 10}, {"much too long", 4}} {
		for _, key := range []string{"kept", "new"} {
			_, err := st.Put(context.Background(), key, strings.NewReader(c.body), contracts.PutOptions{Size: c.size})
			if !errors.Is(err, contracts.ErrSizeMismatch) {
				t.Errorf("put %q declared %d: %v, want ErrSizeMismatch", c.body, c.size, err)
			}
		}
	}
	if _, body, err := get(t, st, "kept", contracts.GetOptions{}); err != nil || string(body) != "previous" {
		t.Errorf("the previous object: %q %v", body, err)
	}
	if _, err := st.Head(context.Background(), "new"); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Errorf("a refused put left an object: %v", err)
	}
}

type failing struct {
	n   int
	err error
}

func (f *failing) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	n := min(len(p), f.n)
	for i := range n {
		p[i] = 'x'
	}
	f.n -= n
	return n, nil
}

// testFailedBody: a body that fails half way, or a cancelled put, stores
// nothing.
func testFailedBody(t *testing.T, st contracts.ObjectStore) {
	boom := errors.New("connection reset")
	put(t, st, content{"kept", []byte("previous"), ""})
	for _, key := range []string{"kept", "new"} {
		if _, err := st.Put(context.Background(), key, &failing{n: 1000, err: boom}, contracts.PutOptions{Size: 5000}); err == nil {
			t.Errorf("a failing body was stored under %s", key)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := st.Put(ctx, key, strings.NewReader("abc"), contracts.PutOptions{Size: 3}); err == nil {
			t.Errorf("a cancelled put was stored under %s", key)
		}
	}
	if _, body, err := get(t, st, "kept", contracts.GetOptions{}); err != nil || string(body) != "previous" {
		t.Errorf("the previous object: %q %v", body, err)
	}
	if _, err := st.Head(context.Background(), "new"); !errors.Is(err, contracts.ErrObjectNotFound) {
		t.Errorf("a failed put left an object: %v", err)
	}
}

func testInvalidKeys(t *testing.T, st contracts.ObjectStore) {
	ctx := context.Background()
	for _, key := range []string{"../etc/passwd", "a//b", "/abs", "a\\b", "", "a/./b"} {
		if _, err := st.Put(ctx, key, strings.NewReader("x"), contracts.PutOptions{Size: 1}); !errors.Is(err, contracts.ErrInvalidKey) {
			t.Errorf("put %q: %v", key, err)
		}
		if _, _, err := st.Get(ctx, key, contracts.GetOptions{}); !errors.Is(err, contracts.ErrInvalidKey) {
			t.Errorf("get %q: %v", key, err)
		}
		if _, err := st.Head(ctx, key); !errors.Is(err, contracts.ErrInvalidKey) {
			t.Errorf("head %q: %v", key, err)
		}
		if err := st.Delete(ctx, key); !errors.Is(err, contracts.ErrInvalidKey) {
			t.Errorf("delete %q: %v", key, err)
		}
	}
	if _, err := st.List(ctx, contracts.ListOptions{Prefix: "../"}); !errors.Is(err, contracts.ErrInvalidKey) {
		t.Errorf("list ../: %v", err)
	}
	if _, err := st.List(ctx, contracts.ListOptions{Limit: contracts.MaxListPage + 1}); !errors.Is(err, contracts.ErrInvalidList) {
		t.Errorf("list past the page limit: %v", err)
	}
	// The longest key, in segments a filesystem-backed store can name.
	long := strings.Repeat(strings.Repeat("k", 99)+"/", contracts.MaxKeyLen/100) + strings.Repeat("k", contracts.MaxKeyLen%100)
	if info := put(t, st, content{long, []byte("x"), ""}); info.Key != long {
		t.Errorf("the longest key came back as %d bytes", len(info.Key))
	}
}

// testList: a prefix selects and pages follow each other in byte order.
func testList(t *testing.T, st contracts.ObjectStore) {
	keys := []string{"a.txt", "a/b", "a/c/d", "ab", "b/x", "a/c/e"}
	for _, k := range keys {
		put(t, st, content{k, []byte(k), ""})
	}
	list := func(o contracts.ListOptions) (string, bool) {
		t.Helper()
		page, err := st.List(context.Background(), o)
		if err != nil {
			t.Fatalf("list %+v: %v", o, err)
		}
		var names []string
		for _, obj := range page.Objects {
			names = append(names, obj.Key)
			if obj.Size != int64(len(obj.Key)) {
				t.Errorf("listed %s with size %d", obj.Key, obj.Size)
			}
		}
		return strings.Join(names, " "), page.More
	}
	if got, more := list(contracts.ListOptions{}); got != "a.txt a/b a/c/d a/c/e ab b/x" || more {
		t.Errorf("all = %q more %v", got, more)
	}
	if got, _ := list(contracts.ListOptions{Prefix: "a/"}); got != "a/b a/c/d a/c/e" {
		t.Errorf("prefix a/ = %q", got)
	}
	if got, _ := list(contracts.ListOptions{Prefix: "a"}); got != "a.txt a/b a/c/d a/c/e ab" {
		t.Errorf("prefix a = %q", got)
	}
	got, more := list(contracts.ListOptions{Limit: 2})
	if got != "a.txt a/b" || !more {
		t.Errorf("first page = %q more %v", got, more)
	}
	if got, more := list(contracts.ListOptions{Limit: 2, After: "a/b"}); got != "a/c/d a/c/e" || !more {
		t.Errorf("second page = %q more %v", got, more)
	}
	if got, more := list(contracts.ListOptions{Limit: 2, After: "ab"}); got != "b/x" || more {
		t.Errorf("last page = %q more %v", got, more)
	}
	if got, _ := list(contracts.ListOptions{Prefix: "zz"}); got != "" {
		t.Errorf("no match = %q", got)
	}
}

// testConcurrentPuts: of puts of one key at once, one wins whole.
func testConcurrentPuts(t *testing.T, st contracts.ObjectStore) {
	const n, size = 6, 64 << 10
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = bytes.Repeat([]byte{byte('a' + i)}, size)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := st.Put(context.Background(), "race", bytes.NewReader(bodies[i]), contracts.PutOptions{Size: size}); err != nil {
				t.Errorf("put %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	_, body, err := get(t, st, "race", contracts.GetOptions{})
	if err != nil || len(body) != size || !bytes.Equal(body, bytes.Repeat(body[:1], size)) {
		t.Fatalf("after concurrent puts: %d bytes, %v; want one body whole", len(body), err)
	}
}

// testLarge: 8 MiB streams through whole.
func testLarge(t *testing.T, st contracts.ObjectStore) {
	body := make([]byte, 8<<20)
	_, _ = rand.Read(body)
	put(t, st, content{"large/blob.bin", body, "application/octet-stream"})
	_, got, err := get(t, st, "large/blob.bin", contracts.GetOptions{})
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("large object: %d bytes back, %v", len(got), err)
	}
	if _, part, err := get(t, st, "large/blob.bin", contracts.GetOptions{Offset: 5 << 20, Length: 10}); err != nil || !bytes.Equal(part, body[5<<20:5<<20+10]) {
		t.Fatalf("range of a large object: %v", err)
	}
}

// testFolders: a key and keys under it as a folder ("a" and "a/b") both
// exist, or the store refuses the second with ErrKeyConflict and keeps the
// first whole.
func testFolders(t *testing.T, st contracts.ObjectStore) {
	ctx := context.Background()
	for _, pair := range [][2]string{{"f", "f/g"}, {"h/i", "h"}} {
		put(t, st, content{pair[0], []byte("first"), ""})
		_, err := st.Put(ctx, pair[1], strings.NewReader("second"), contracts.PutOptions{Size: 6})
		if err != nil && !errors.Is(err, contracts.ErrKeyConflict) {
			t.Errorf("put %s beside %s: %v, want nil or ErrKeyConflict", pair[1], pair[0], err)
		}
		if _, body, err := get(t, st, pair[0], contracts.GetOptions{}); err != nil || string(body) != "first" {
			t.Errorf("%s after %s: %q %v", pair[0], pair[1], body, err)
		}
		if err == nil {
			if _, body, gerr := get(t, st, pair[1], contracts.GetOptions{}); gerr != nil || string(body) != "second" {
				t.Errorf("%s: %q %v", pair[1], body, gerr)
			}
		}
	}
}
