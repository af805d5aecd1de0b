package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// Store is an ObjectStore in memory.
type Store struct {
	now func() time.Time

	mu      sync.RWMutex
	objects map[string]object
}

type object struct {
	info contracts.ObjectInfo
	body []byte
}

var _ contracts.ObjectStore = (*Store)(nil)

// New returns an empty Store.
func New() *Store { return &Store{now: time.Now, objects: map[string]object{}} }

// readBody reads exactly size bytes of body, or fails with
// ErrSizeMismatch; ctx stops it.
func readBody(ctx context.Context, body io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: size %d is negative", contracts.ErrSizeMismatch, size)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(ctxReader{ctx, body}, size+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read the object: %w", err)
	case n != size:
		return nil, fmt.Errorf("%w: the body has %s bytes, the put declared %d", contracts.ErrSizeMismatch, more(n, size), size)
	}
	return buf.Bytes(), nil
}

func more(n, size int64) string {
	if n > size {
		return fmt.Sprintf("more than %d", size)
	}
	return fmt.Sprint(n)
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
	data, err := readBody(ctx, body, opts.Size)
	if err != nil {
		return contracts.ObjectInfo{}, err
	}
	sum := sha256.Sum256(data)
	info := contracts.ObjectInfo{Key: key, Size: int64(len(data)), ContentType: opts.ContentType,
		ETag: hex.EncodeToString(sum[:]), Modified: s.now().UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{info: info, body: data}
	return info, nil
}

// Get implements contracts.ObjectStore.
func (s *Store) Get(_ context.Context, key string, opts contracts.GetOptions) (contracts.ObjectInfo, io.ReadCloser, error) {
	o, err := s.find(key)
	if err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	off, n, err := contracts.CheckRange(opts, o.info.Size)
	if err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	return o.info, io.NopCloser(bytes.NewReader(o.body[off : off+n])), nil
}

func (s *Store) find(key string) (object, error) {
	if err := contracts.CheckKey(key); err != nil {
		return object{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.objects[key]
	if !ok {
		return object{}, fmt.Errorf("%w: %s", contracts.ErrObjectNotFound, key)
	}
	return o, nil
}

// Head implements contracts.ObjectStore.
func (s *Store) Head(_ context.Context, key string) (contracts.ObjectInfo, error) {
	o, err := s.find(key)
	return o.info, err
}

// Delete implements contracts.ObjectStore.
func (s *Store) Delete(_ context.Context, key string) error {
	if err := contracts.CheckKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, key)
	return nil
}

// List implements contracts.ObjectStore.
func (s *Store) List(_ context.Context, opts contracts.ListOptions) (contracts.ListPage, error) {
	limit, err := contracts.CheckList(opts)
	if err != nil {
		return contracts.ListPage{}, err
	}
	s.mu.RLock()
	var keys []string
	for k := range s.objects {
		if strings.HasPrefix(k, opts.Prefix) && k > opts.After {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	page := contracts.ListPage{Objects: []contracts.ObjectInfo{}, More: len(keys) > limit}
	for _, k := range keys[:min(limit, len(keys))] {
		page.Objects = append(page.Objects, s.objects[k].info)
	}
	s.mu.RUnlock()
	return page, nil
}
