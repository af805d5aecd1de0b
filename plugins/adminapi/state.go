package adminapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// stateCache is the last state answer and what it was built from: the
// kernel's generation and the pending approvals. It is rebuilt only when
// one of them changed, so a poll of an idle kernel costs a lookup and a
// write.
type stateCache struct {
	mu   sync.Mutex
	key  string
	view adminv1.State
	body []byte
}

// stateKey is what the state depends on; it names the ETag.
func (a *admin) stateKey() (string, []judge.Approval) {
	pending := a.judge.Pending()
	raw, _ := json.Marshal(pending)
	sum := sha256.Sum256(raw)
	return strconv.FormatUint(a.k.Generation(), 36) + "-" + hex.EncodeToString(sum[:6]), pending
}

// snapshot returns the state and its JSON, from the cache when nothing
// changed since it was built. A state built while the kernel changed is
// answered but not kept.
func (a *admin) snapshot() (string, adminv1.State, []byte, error) {
	key, pending := a.stateKey()
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key == key {
		return key, c.view, c.body, nil
	}
	v := a.buildState(pending)
	body, err := json.Marshal(v)
	if err != nil {
		return "", v, nil, fmt.Errorf("encode state: %w", err)
	}
	body = append(body, '\n')
	if again, _ := a.stateKey(); again == key {
		c.key, c.view, c.body = key, v, body
	}
	return key, v, body, nil
}

func (a *admin) buildState(pending []judge.Approval) adminv1.State {
	s := a.k.State()
	v := adminv1.State{Kernel: s.Name, Auth: adminv1.AuthOpen, Fibers: wireFibers(s.Fibers), Pending: a.located(wireApprovals(pending)),
		Routes: wireRoutes(a.http.Routes()), Taint: s.Taint.Names(), SafeMode: s.SafeMode}
	if a.http.Secured() {
		v.Auth = adminv1.AuthToken
	}
	if f, ok := a.ctx.Kernel().Fiber(auth.PluginID); ok && f.State == kernel.StateActive {
		v.Users = true
	}
	if v.Pending == nil {
		v.Pending = []adminv1.Approval{}
	}
	v.Plugins = v.Fibers
	v.Collections = []adminv1.Collection{}
	if svc, err := kernel.Lookup[collections.Service](a.ctx, collections.Key); err == nil {
		v.Collections = wireCollections(svc.Definitions())
	}
	return v
}

// stateFilter narrows the fibers a state answer lists: by trust, and a
// page of them, for kernels with many plugins.
type stateFilter struct {
	trust         string // "", "system" or "agent"
	limit, offset int    // limit 0: all
}

func parseStateFilter(q map[string]string) (stateFilter, error) {
	f := stateFilter{trust: q["trust"]}
	if f.trust != "" && f.trust != "system" && f.trust != "agent" {
		return f, smshttp.NewError(smshttp.KindValidation, fmt.Sprintf("trust %q must be system or agent", f.trust))
	}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &f.limit}, {"offset", &f.offset}} {
		raw, ok := q[p.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return f, smshttp.NewError(smshttp.KindValidation, fmt.Sprintf("%s %q must be a whole number from 0", p.name, raw))
		}
		*p.dst = n
	}
	return f, nil
}

func (f stateFilter) none() bool { return f == stateFilter{} }

// tag is the filter's part of the ETag.
func (f stateFilter) tag() string {
	if f.none() {
		return ""
	}
	return fmt.Sprintf(";%s;%d;%d", f.trust, f.limit, f.offset)
}

func (f stateFilter) apply(v adminv1.State) adminv1.State {
	var fibers []adminv1.Fiber
	for _, fv := range v.Fibers {
		if f.trust == "" || strings.EqualFold(fv.Trust.String(), f.trust) {
			fibers = append(fibers, fv)
		}
	}
	fibers = fibers[min(f.offset, len(fibers)):]
	if f.limit > 0 && f.limit < len(fibers) {
		fibers = fibers[:f.limit]
	}
	if fibers == nil {
		fibers = []adminv1.Fiber{}
	}
	v.Fibers, v.Plugins = fibers, fibers
	return v
}

// state serves GET /api/state with an ETag: a client that sends it back in
// If-None-Match gets 304 Not Modified until the kernel changes.
func (a *admin) state(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	filter, err := parseStateFilter(r.Query)
	if err != nil {
		return nil, err
	}
	key, view, body, err := a.snapshot()
	if err != nil {
		return nil, err
	}
	etag := `"` + key + filter.tag() + `"`
	headers := map[string]string{"ETag": etag, "Cache-Control": "no-cache", adminv1.VersionHeader: adminv1.Version}
	if r.Raw != nil && matches(r.Raw.Header.Get("If-None-Match"), etag) {
		return &smshttp.Response{Status: http.StatusNotModified, Headers: headers}, nil
	}
	if !filter.none() {
		if body, err = json.Marshal(filter.apply(view)); err != nil {
			return nil, fmt.Errorf("encode state: %w", err)
		}
		body = append(body, '\n')
	}
	return &smshttp.Response{Headers: headers, Stream: func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}}, nil
}

// matches reports whether an If-None-Match header names etag.
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		if t = strings.TrimSpace(t); t == etag || t == "*" || t == "W/"+etag {
			return true
		}
	}
	return false
}
