package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sms-baseline/sms/contracts"
)

// Options say which bucket to use and how to reach it.
type Options struct {
	// Endpoint is the service's URL (https://s3.amazonaws.com when empty;
	// https://<account>.r2.cloudflarestorage.com for R2). An http:// URL
	// is sent without TLS.
	Endpoint string
	// Region is the bucket's region ("auto" for R2); empty lets the client
	// ask.
	Region string
	Bucket string
	// Prefix is prepended to every key, "tenants/acme/" say: it keeps
	// several stores in one bucket apart. It must end with "/".
	Prefix    string
	AccessKey string
	SecretKey string
}

// Store is an ObjectStore in a bucket.
type Store struct {
	c      *minio.Client
	bucket string
	prefix string
}

var _ contracts.ObjectStore = (*Store)(nil)

// New returns the store of opts. It makes no request: a wrong endpoint or
// key shows on the first call.
func New(opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3: a bucket is required")
	}
	if opts.Prefix != "" && (!strings.HasSuffix(opts.Prefix, "/") || contracts.CheckPrefix(opts.Prefix) != nil || len(opts.Prefix) > contracts.MaxStorePrefixLen) {
		return nil, fmt.Errorf("s3: prefix %q must be a key prefix ending with / of at most %d bytes", opts.Prefix, contracts.MaxStorePrefixLen)
	}
	host, secure := "s3.amazonaws.com", true
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("s3: endpoint %q must be http(s)://host[:port]", opts.Endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, ""),
		Secure: secure, Region: opts.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	return &Store{c: c, bucket: opts.Bucket, prefix: opts.Prefix}, nil
}

// EnsureBucket creates the bucket when it does not exist.
func (s *Store) EnsureBucket(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("s3: bucket %s: %w", s.bucket, err)
	}
	if ok {
		return nil
	}
	if err := s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("s3: make bucket %s: %w", s.bucket, err)
	}
	return nil
}

// mapErr gives S3's errors the contract's meaning.
func mapErr(key string, err error) error {
	switch code := minio.ToErrorResponse(err).Code; code {
	case "NoSuchKey", "NotFound":
		return fmt.Errorf("%w: %s", contracts.ErrObjectNotFound, key)
	case "InvalidRange":
		return fmt.Errorf("%w: %s", contracts.ErrInvalidRange, key)
	case "ObjectParentIsFile", "ExistingObjectIsDirectory": // a filesystem-backed service
		return fmt.Errorf("%w: %s (%s)", contracts.ErrKeyConflict, key, code)
	}
	return fmt.Errorf("s3: %s: %w", key, err)
}

func (s *Store) info(key string, o minio.ObjectInfo) contracts.ObjectInfo {
	return contracts.ObjectInfo{Key: key, Size: o.Size, ContentType: o.ContentType, ETag: strings.Trim(o.ETag, `"`), Modified: o.LastModified.UTC()}
}

// counted fails the put when the body is longer or shorter than declared,
// so the request is abandoned and S3 stores nothing.
type counted struct {
	r    io.Reader
	left int64
	size int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	switch {
	case c.left < 0:
		return n, fmt.Errorf("%w: the body has more than the %d bytes the put declared", contracts.ErrSizeMismatch, c.size)
	case errors.Is(err, io.EOF) && c.left > 0:
		return n, fmt.Errorf("%w: the body has %d bytes, the put declared %d", contracts.ErrSizeMismatch, c.size-c.left, c.size)
	case c.left == 0 && err == nil:
		// Look one byte further: a longer body must fail.
		var one [1]byte
		if m, _ := c.r.Read(one[:]); m > 0 {
			return n, fmt.Errorf("%w: the body has more than the %d bytes the put declared", contracts.ErrSizeMismatch, c.size)
		}
		return n, io.EOF
	}
	return n, err
}

// Put implements contracts.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts contracts.PutOptions) (contracts.ObjectInfo, error) {
	if err := contracts.CheckKey(key); err != nil {
		return contracts.ObjectInfo{}, err
	}
	if opts.Size < 0 {
		return contracts.ObjectInfo{}, fmt.Errorf("%w: size %d is negative", contracts.ErrSizeMismatch, opts.Size)
	}
	c := &counted{r: body, left: opts.Size, size: opts.Size}
	if opts.Size == 0 {
		var one [1]byte
		if n, _ := body.Read(one[:]); n > 0 {
			return contracts.ObjectInfo{}, fmt.Errorf("%w: the body has more than the 0 bytes the put declared", contracts.ErrSizeMismatch)
		}
	}
	ctype := opts.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	up, err := s.c.PutObject(ctx, s.bucket, s.prefix+key, c, opts.Size, minio.PutObjectOptions{ContentType: ctype,
		DisableMultipart: opts.Size <= 64<<20, SendContentMd5: false})
	if err != nil {
		if errors.Is(err, contracts.ErrSizeMismatch) {
			return contracts.ObjectInfo{}, err
		}
		var sm error
		if c.left != 0 {
			sm = fmt.Errorf("%w: the body ended after %d of %d bytes", contracts.ErrSizeMismatch, opts.Size-c.left, opts.Size)
		}
		return contracts.ObjectInfo{}, errors.Join(sm, mapErr(key, err))
	}
	mod := up.LastModified
	if mod.IsZero() {
		mod = time.Now()
	}
	return contracts.ObjectInfo{Key: key, Size: up.Size, ContentType: opts.ContentType, ETag: strings.Trim(up.ETag, `"`), Modified: mod.UTC()}, nil
}

// Get implements contracts.ObjectStore.
func (s *Store) Get(ctx context.Context, key string, opts contracts.GetOptions) (contracts.ObjectInfo, io.ReadCloser, error) {
	info, err := s.Head(ctx, key)
	if err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	off, n, err := contracts.CheckRange(opts, info.Size)
	if err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	if n == 0 {
		return info, io.NopCloser(strings.NewReader("")), nil
	}
	g := minio.GetObjectOptions{}
	// Pinned to the version Head saw: an object replaced in between fails
	// rather than mixing two contents' info and bytes.
	if err := g.SetMatchETag(info.ETag); err != nil {
		return contracts.ObjectInfo{}, nil, err
	}
	if off != 0 || n != info.Size {
		if err := g.SetRange(off, off+n-1); err != nil {
			return contracts.ObjectInfo{}, nil, err
		}
	}
	o, err := s.c.GetObject(ctx, s.bucket, s.prefix+key, g)
	if err != nil {
		return contracts.ObjectInfo{}, nil, mapErr(key, err)
	}
	return info, o, nil
}

// Head implements contracts.ObjectStore.
func (s *Store) Head(ctx context.Context, key string) (contracts.ObjectInfo, error) {
	if err := contracts.CheckKey(key); err != nil {
		return contracts.ObjectInfo{}, err
	}
	o, err := s.c.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return contracts.ObjectInfo{}, mapErr(key, err)
	}
	return s.info(key, o), nil
}

// Delete implements contracts.ObjectStore.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := contracts.CheckKey(key); err != nil {
		return err
	}
	if err := s.c.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(mapErr(key, err), contracts.ErrObjectNotFound) {
			return nil
		}
		return mapErr(key, err)
	}
	return nil
}

// List implements contracts.ObjectStore.
func (s *Store) List(ctx context.Context, opts contracts.ListOptions) (contracts.ListPage, error) {
	limit, err := contracts.CheckList(opts)
	if err != nil {
		return contracts.ListPage{}, err
	}
	lo := minio.ListObjectsOptions{Prefix: s.prefix + opts.Prefix, Recursive: true, MaxKeys: limit + 1}
	if opts.After != "" {
		lo.StartAfter = s.prefix + opts.After
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing past the page
	page := contracts.ListPage{Objects: []contracts.ObjectInfo{}}
	for o := range s.c.ListObjects(ctx, s.bucket, lo) {
		if o.Err != nil {
			return contracts.ListPage{}, mapErr(opts.Prefix, o.Err)
		}
		if len(page.Objects) == limit {
			page.More = true
			break
		}
		page.Objects = append(page.Objects, s.info(strings.TrimPrefix(o.Key, s.prefix), o))
	}
	return page, nil
}
