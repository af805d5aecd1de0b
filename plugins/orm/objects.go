package orm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/sms-baseline/sms/contracts"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Binary is the value of a binary field: where its file is and what it is.
type Binary struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Type   string `json:"type,omitempty"`
	SHA256 string `json:"sha256"`
}

// ObjectLimits bound the files of binary fields.
type ObjectLimits struct {
	// MaxBytes is the largest file (DefaultMaxObjectBytes).
	MaxBytes int64
	// PerCaller is how many uploads one user or credential may have in
	// flight at once (DefaultUploadsPerCaller).
	PerCaller int
	// MaxStored is the most bytes the files of every binary field may take
	// together (DefaultMaxStoredBytes): the tenant's quota.
	MaxStored int64
}

// Defaults of ObjectLimits.
const (
	DefaultMaxObjectBytes   = 32 << 20
	DefaultUploadsPerCaller = 2
	DefaultMaxStoredBytes   = 1 << 30
)

func (l ObjectLimits) withDefaults() ObjectLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxObjectBytes
	}
	if l.PerCaller <= 0 {
		l.PerCaller = DefaultUploadsPerCaller
	}
	if l.MaxStored <= 0 {
		l.MaxStored = DefaultMaxStoredBytes
	}
	return l
}

// files is the ORM's side of the object store: the store when the kernel
// has one, the uploads in flight and the bytes stored.
type files struct {
	limits ObjectLimits
	store  func() (contracts.ObjectStore, bool)

	mu       sync.Mutex
	inFlight map[string]int
	stored   int64 // -1 until counted
	reserved int64 // bytes of the uploads in flight
}

func newFiles(limits ObjectLimits) *files {
	return &files{limits: limits.withDefaults(), inFlight: map[string]int{}, stored: -1,
		store: func() (contracts.ObjectStore, bool) { return nil, false }}
}

// objectRoute is the path of a binary field's file.
const objectRoute = RESTPath + "/:model/:id/:field"

// objectRoutes serve the files: PUT uploads (the caller must be allowed to
// write the record), GET downloads (to read it), DELETE clears.
func (s *service) objectRoutes() []smshttp.Route {
	admin, users := !s.userREST, s.userREST
	return []smshttp.Route{
		{Method: http.MethodPut, Path: objectRoute, Scope: smshttp.ScopeAdmin, Admin: admin, Users: users, RawBody: true, Handler: s.upload},
		{Method: http.MethodGet, Path: objectRoute, Scope: smshttp.ScopeRead, Admin: admin, Users: users, Handler: s.download},
		{Method: http.MethodDelete, Path: objectRoute, Scope: smshttp.ScopeAdmin, Admin: admin, Users: users, Handler: s.clearFile},
	}
}

// fileTarget resolves a request's model, record and binary field, acting
// for the caller.
func (s *service) fileTarget(ctx context.Context, r *smshttp.Request) (context.Context, *model, int64, string, error) {
	op := s.contextOf(ctx)
	op.Sudo = false
	ctx = WithOp(ctx, op)
	_, m, err := s.model(ctx, r.Params["model"])
	if err != nil {
		return ctx, nil, 0, "", restErr(err)
	}
	id, err := strconv.ParseInt(r.Params["id"], 10, 64)
	if err != nil || id < 1 {
		return ctx, nil, 0, "", smshttp.NewError(smshttp.KindValidation, "the record id must be a whole number from 1, got "+strconv.Quote(r.Params["id"]))
	}
	name := r.Params["field"]
	if f := m.fields[name]; f == nil || f.Kind != KindBinary || !f.stored() {
		return ctx, nil, 0, "", smshttp.NewError(smshttp.KindValidation, fmt.Sprintf("model %s has no binary field %q", m.name, name))
	}
	return ctx, m, id, name, nil
}

// current is the Binary a record's field holds, read as the caller.
func (s *service) current(ctx context.Context, m *model, id int64, field string) (*Binary, error) {
	recs, err := s.Read(ctx, m.name, []int64{id}, ReadSpec{field: nil})
	if err != nil {
		return nil, restErr(err)
	}
	raw, ok := recs[0][field].(map[string]any)
	if !ok {
		return nil, nil
	}
	b := &Binary{}
	b.Key, _ = raw["key"].(string)
	b.Type, _ = raw["type"].(string)
	b.SHA256, _ = raw["sha256"].(string)
	size, _ := asInt(raw["size"])
	b.Size = size
	return b, nil
}

func (f *files) need() (contracts.ObjectStore, error) {
	st, ok := f.store()
	if !ok {
		return nil, smshttp.NewError(smshttp.KindNotFound, "this kernel has no object store for files (manager kernel --objects)")
	}
	return st, nil
}

// newKey is a fresh key for a file of a record's field: an upload never
// overwrites the file the record holds until the record says so.
func newKey(model string, id int64, field string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("orm/%s/%d/%s/%s", model, id, field, hex.EncodeToString(b[:]))
}

// hashing computes the SHA-256 of what it reads.
type hashing struct {
	r io.Reader
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (h hashing) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	_, _ = h.h.Write(p[:n])
	return n, err
}

// upload stores the request's body and points the record's field at it;
// the previous file goes once the record changed. A body that fails, or a
// write the guard refuses, leaves no file and no change.
func (s *service) upload(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	ctx, m, id, field, err := s.fileTarget(ctx, r)
	if err != nil {
		return nil, err
	}
	st, err := s.files.need()
	if err != nil {
		return nil, err
	}
	if err := s.writable(ctx, m.name, []int64{id}); err != nil {
		return nil, restErr(err)
	}
	size := r.Raw.ContentLength
	if size < 0 {
		return nil, smshttp.NewError(smshttp.KindValidation, "an upload needs its Content-Length")
	}
	release, err := s.files.reserve(callerName(ctx), size, func() (int64, error) { return s.countStored(ctx) })
	if err != nil {
		return nil, err
	}
	defer release()
	old, err := s.current(ctx, m, id, field)
	if err != nil {
		return nil, err
	}
	b := Binary{Key: newKey(m.name, id, field), Size: size, Type: r.Raw.Header.Get("Content-Type")}
	h := hashing{r: r.Raw.Body, h: sha256.New()}
	if _, err := st.Put(ctx, b.Key, h, contracts.PutOptions{Size: size, ContentType: b.Type}); err != nil {
		if errors.Is(err, contracts.ErrSizeMismatch) {
			return nil, smshttp.NewError(smshttp.KindValidation, err.Error())
		}
		return nil, fmt.Errorf("store the file: %w", err)
	}
	b.SHA256 = hex.EncodeToString(h.h.Sum(nil))
	if err := s.Write(ctx, m.name, []int64{id}, map[string]any{field: b}); err != nil {
		_ = st.Delete(context.WithoutCancel(ctx), b.Key)
		return nil, restErr(err)
	}
	s.files.added(size)
	if old != nil {
		s.files.drop(context.WithoutCancel(ctx), []Binary{*old})
	}
	return smshttp.JSON(b), nil
}

// download streams the record's file to a caller who may read the record.
func (s *service) download(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	ctx, m, id, field, err := s.fileTarget(ctx, r)
	if err != nil {
		return nil, err
	}
	st, err := s.files.need()
	if err != nil {
		return nil, err
	}
	b, err := s.current(ctx, m, id, field)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, smshttp.NewError(smshttp.KindNotFound, fmt.Sprintf("record %d of %s has no file in %s", id, m.name, field))
	}
	info, body, err := st.Get(ctx, b.Key, contracts.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	return &smshttp.Response{Stream: func(w http.ResponseWriter) {
		defer func() { _ = body.Close() }()
		h := w.Header()
		h.Set("Content-Type", info.ContentType)
		if info.ContentType == "" {
			h.Set("Content-Type", "application/octet-stream")
		}
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		h.Set("ETag", `"`+b.SHA256+`"`)
		// A file is the user's data, never a page of this origin.
		h.Set("Content-Disposition", "attachment")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, body)
	}}, nil
}

// clearFile empties the field and deletes its file.
func (s *service) clearFile(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	ctx, m, id, field, err := s.fileTarget(ctx, r)
	if err != nil {
		return nil, err
	}
	b, err := s.current(ctx, m, id, field)
	if err != nil {
		return nil, err
	}
	if err := s.Write(ctx, m.name, []int64{id}, map[string]any{field: Binary{}}); err != nil {
		return nil, restErr(err)
	}
	if b != nil {
		s.files.drop(context.WithoutCancel(ctx), []Binary{*b})
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

// callerName names whom the bound on uploads in flight counts.
func callerName(ctx context.Context) string {
	p := smshttp.PrincipalFrom(ctx)
	switch {
	case p.UserID != 0:
		return fmt.Sprintf("user %d", p.UserID)
	case p.Authenticated:
		return "credential " + p.Name
	}
	return "anonymous"
}
