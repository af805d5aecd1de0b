package fs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// magic ends every object file.
const magic = "SMSOBJ1\n"

// Store is an ObjectStore in a directory.
type Store struct {
	root string
	now  func() time.Time
}

var _ contracts.ObjectStore = (*Store)(nil)

// New opens the store in root, creating it, and removes the temporary
// files a crash left.
func New(root string) (*Store, error) {
	for _, dir := range []string{filepath.Join(root, "objects"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("object store %s: %w", root, err)
		}
	}
	left, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", root, err)
	}
	for _, e := range left {
		_ = os.Remove(filepath.Join(root, "tmp", e.Name()))
	}
	return &Store{root: root, now: time.Now}, nil
}

// segment is one key segment as a file name.
func segment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() > 200 {
		sum := sha256.Sum256([]byte(s))
		return "h~" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

// path is the file of a valid key.
func (s *Store) path(key string) string {
	segs := strings.Split(key, "/")
	parts := []string{s.root, "objects"}
	for _, seg := range segs[:len(segs)-1] {
		parts = append(parts, segment(seg)+".d")
	}
	return filepath.Join(append(parts, segment(segs[len(segs)-1])+".o")...)
}

// trailer is what an object file ends with, before its length and magic.
type trailer struct {
	Key         string    `json:"key"`
	Size        int64     `json:"size"`
	ContentType string    `json:"contentType,omitempty"`
	SHA256      string    `json:"sha256"`
	Modified    time.Time `json:"modified"`
}

func (t trailer) info() contracts.ObjectInfo {
	return contracts.ObjectInfo{Key: t.Key, Size: t.Size, ContentType: t.ContentType, ETag: t.SHA256, Modified: t.Modified}
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Put implements contracts.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts contracts.PutOptions) (contracts.ObjectInfo, error) {
	if err := contracts.CheckKey(key); err != nil {
		return contracts.ObjectInfo{}, err
	}
	if opts.Size < 0 {
		return contracts.ObjectInfo{}, fmt.Errorf("%w: size %d is negative", contracts.ErrSizeMismatch, opts.Size)
	}
	tmp, err := os.CreateTemp(filepath.Join(s.root, "tmp"), "put-*")
	if err != nil {
		return contracts.ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone already once renamed
	t, err := s.write(ctx, tmp, upload{key, body, opts})
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("put %s: %w", key, cerr)
	}
	if err != nil {
		return contracts.ObjectInfo{}, err
	}
	if err := s.place(tmp.Name(), s.path(key)); err != nil {
		return contracts.ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	return t.info(), nil
}

// upload is what a Put is given.
type upload struct {
	key  string
	body io.Reader
	opts contracts.PutOptions
}

// write writes the body and the trailer to f and syncs it.
func (s *Store) write(ctx context.Context, f *os.File, u upload) (trailer, error) {
	key, body, opts := u.key, u.body, u.opts
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(ctxReader{ctx, body}, opts.Size+1))
	switch {
	case err != nil:
		return trailer{}, fmt.Errorf("put %s: read the object: %w", key, err)
	case n > opts.Size:
		return trailer{}, fmt.Errorf("%w: the body of %s has more than the %d bytes the put declared", contracts.ErrSizeMismatch, key, opts.Size)
	case n < opts.Size:
		return trailer{}, fmt.Errorf("%w: the body of %s has %d bytes, the put declared %d", contracts.ErrSizeMismatch, key, n, opts.Size)
	}
	t := trailer{Key: key, Size: n, ContentType: opts.ContentType, SHA256: sum(h), Modified: s.now().UTC()}
	raw, err := json.Marshal(t)
	if err != nil {
		return trailer{}, err
	}
	raw = binary.BigEndian.AppendUint64(raw, uint64(len(raw)))
	if _, err := f.Write(append(raw, magic...)); err != nil {
		return trailer{}, fmt.Errorf("put %s: %w", key, err)
	}
	if err := f.Sync(); err != nil {
		return trailer{}, fmt.Errorf("put %s: %w", key, err)
	}
	return t, nil
}

func sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// place renames tmp to path, making its folders; a delete that removes an
// emptied folder at the same moment makes it try again.
func (s *Store) place(tmp, path string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			continue
		}
		if err = os.Rename(tmp, path); err == nil {
			return syncDir(filepath.Dir(path))
		}
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// open opens key's file and reads its trailer.
func (s *Store) open(key string) (*os.File, trailer, error) {
	if err := contracts.CheckKey(key); err != nil {
		return nil, trailer{}, err
	}
	f, err := os.Open(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, trailer{}, fmt.Errorf("%w: %s", contracts.ErrObjectNotFound, key)
	}
	if err != nil {
		return nil, trailer{}, err
	}
	t, err := readTrailer(f)
	if err != nil {
		_ = f.Close()
		return nil, trailer{}, fmt.Errorf("object %s: %w", key, err)
	}
	return f, t, nil
}

func readTrailer(f *os.File) (trailer, error) {
	st, err := f.Stat()
	if err != nil {
		return trailer{}, err
	}
	end := make([]byte, 8+len(magic))
	if st.Size() < int64(len(end)) {
		return trailer{}, errors.New("the file is too short to be an object")
	}
	if _, err := f.ReadAt(end, st.Size()-int64(len(end))); err != nil {
		return trailer{}, err
	}
	if string(end[8:]) != magic {
		return trailer{}, errors.New("the file is not an object (no trailer)")
	}
	n := int64(binary.BigEndian.Uint64(end[:8]))
	if n <= 0 || n > st.Size()-int64(len(end)) {
		return trailer{}, errors.New("the object's trailer is damaged")
	}
	raw := make([]byte, n)
	if _, err := f.ReadAt(raw, st.Size()-int64(len(end))-n); err != nil {
		return trailer{}, err
	}
	var t trailer
	if err := json.Unmarshal(raw, &t); err != nil {
		return trailer{}, fmt.Errorf("the object's trailer: %w", err)
	}
	return t, nil
}

// Get implements contracts.ObjectStore.
func (s *Store) Get(_ context.Context, key string, opts contracts.GetOptions) (contracts.ObjectInfo, io.ReadCloser, error) {
	f, t, err := s.open(key)
	if err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	off, n, err := contracts.CheckRange(opts, t.Size)
	if err != nil {
		_ = f.Close()
		return contracts.ObjectInfo{}, nil, err
	}
	return t.info(), section{io.NewSectionReader(f, off, n), f}, nil
}

// section reads part of a file and closes it.
type section struct {
	*io.SectionReader
	f *os.File
}

func (s section) Close() error { return s.f.Close() }

// Head implements contracts.ObjectStore.
func (s *Store) Head(_ context.Context, key string) (contracts.ObjectInfo, error) {
	f, t, err := s.open(key)
	if err != nil {
		return contracts.ObjectInfo{}, err
	}
	_ = f.Close()
	return t.info(), nil
}

// Delete implements contracts.ObjectStore.
func (s *Store) Delete(_ context.Context, key string) error {
	if err := contracts.CheckKey(key); err != nil {
		return err
	}
	path := s.path(key)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	// Remove the folders the delete emptied (a folder still in use stays).
	top := filepath.Join(s.root, "objects")
	for dir := filepath.Dir(path); dir != top; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// List implements contracts.ObjectStore.
func (s *Store) List(_ context.Context, opts contracts.ListOptions) (contracts.ListPage, error) {
	limit, err := contracts.CheckList(opts)
	if err != nil {
		return contracts.ListPage{}, err
	}
	start := filepath.Join(s.root, "objects")
	if i := strings.LastIndex(opts.Prefix, "/"); i > 0 {
		for _, seg := range strings.Split(opts.Prefix[:i], "/") {
			start = filepath.Join(start, segment(seg)+".d")
		}
	}
	var found []contracts.ObjectInfo
	err = filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a folder deleted while we walk, or none yet
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".o") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil // deleted while we walk
		}
		t, err := readTrailer(f)
		_ = f.Close()
		if err == nil && strings.HasPrefix(t.Key, opts.Prefix) && t.Key > opts.After {
			found = append(found, t.info())
		}
		return nil
	})
	if err != nil {
		return contracts.ListPage{}, fmt.Errorf("list %q: %w", opts.Prefix, err)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Key < found[j].Key })
	return contracts.ListPage{Objects: append([]contracts.ObjectInfo{}, found[:min(limit, len(found))]...), More: len(found) > limit}, nil
}
