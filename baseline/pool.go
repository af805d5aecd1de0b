package baseline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// TenantHeader is the default request header naming the tenant.
const TenantHeader = "X-Tenant"

// ValidTenant reports whether id is a tenant id: it becomes a file or
// schema name, so it is 1-63 characters of a-z, 0-9, '_' and '-', starting
// with a letter or digit.
func ValidTenant(id string) bool {
	if id == "" || len(id) > 63 || !isLowerAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if !isLowerAlnum(id[i]) && id[i] != '_' && id[i] != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// PoolOptions configure a TenantPool. A tenant's kernel is configured by
// Tenant when it is set, else by Base with the store Open opens.
type PoolOptions struct {
	// Tenant returns the options of a tenant's kernel: its own store, and
	// its own credentials, model and plugins (never share an admin token
	// between tenants). Name defaults to the tenant id.
	Tenant func(ctx context.Context, tenant string) (Options, error)
	// Open opens a tenant's store when Tenant is not set. SQLiteStores and
	// PostgresStores build one.
	Open func(ctx context.Context, tenant string) (contracts.Store, error)
	// Base is the configuration every tenant's kernel starts from when
	// Tenant is not set; its Name and Store are set per tenant.
	Base Options
	// Resolve names the tenant of a request. Default: the Header, else the
	// subdomain (TenantFromSubdomain with no root: acme.example.com,
	// acme.localhost); a bare domain or an IP address names no tenant.
	Resolve Resolver
	// Header names the tenant in requests for the default Resolve.
	// Default TenantHeader.
	Header string
	// OnMissing answers a request that names no tenant. Default: a 400
	// saying how to name one.
	OnMissing http.Handler
	// IdleAfter is how long a tenant may go without requests before it is
	// closed (it boots again on its next request). The pool checks every
	// quarter of it (at least every second, at most every minute) until
	// Close; EvictIdle checks at once. Zero keeps tenants until Evict or
	// Close.
	IdleAfter time.Duration
	// Now is the clock for idleness. Default time.Now.
	Now func() time.Time
}

// SQLiteStores opens one SQLite file per tenant, dir/<tenant>.db.
func SQLiteStores(dir string) func(context.Context, string) (contracts.Store, error) {
	return func(ctx context.Context, tenant string) (contracts.Store, error) {
		return sqlite.OpenStore(ctx, filepath.Join(dir, tenant+".db"))
	}
}

// PostgresStores opens one schema per tenant on the server at url, named
// prefix + tenant with '-' turned into '_'.
func PostgresStores(url, prefix string) func(context.Context, string) (contracts.Store, error) {
	return func(ctx context.Context, tenant string) (contracts.Store, error) {
		schema := prefix + strings.ReplaceAll(tenant, "-", "_")
		return postgres.OpenStore(ctx, postgres.Options{URL: url, Schema: schema})
	}
}

// TenantPool runs one kernel per tenant, booted on first use. It is safe
// for concurrent use.
type TenantPool struct {
	opts PoolOptions
	stop chan struct{} // closed by Close: ends the idle timer

	mu      sync.Mutex
	tenants map[string]*tenantEntry
	closed  bool
}

type tenantEntry struct {
	ready chan struct{} // closed when the boot ended
	b     *Baseline
	err   error
	used  time.Time
}

// NewTenantPool returns an empty pool.
func NewTenantPool(opts PoolOptions) *TenantPool {
	if opts.Header == "" {
		opts.Header = TenantHeader
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Resolve == nil {
		opts.Resolve = FirstOf(TenantFromHeader(opts.Header, ""), TenantFromSubdomain(SubdomainOptions{}))
	}
	p := &TenantPool{opts: opts, tenants: map[string]*tenantEntry{}, stop: make(chan struct{})}
	if opts.IdleAfter > 0 {
		go p.evictEvery(min(max(opts.IdleAfter/4, time.Second), time.Minute))
	}
	return p
}

// evictEvery runs EvictIdle every period until Close.
func (p *TenantPool) evictEvery(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			_, _ = p.EvictIdle() // a kernel that fails to close is gone from the pool all the same
		}
	}
}

// Tick runs the due scheduled jobs of every booted tenant at now (idle,
// evicted tenants are not woken), and returns each failure by tenant.
func (p *TenantPool) Tick(ctx context.Context, now time.Time) map[string]error {
	errs := map[string]error{}
	for id, b := range p.booted() {
		if err := b.Tick(ctx, now); err != nil {
			errs[id] = err
		}
	}
	return errs
}

// booted returns the kernels whose boot has ended well, by tenant. An
// entry still booting is left out: its kernel is not written yet.
func (p *TenantPool) booted() map[string]*Baseline {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]*Baseline{}
	for id, e := range p.tenants {
		select {
		case <-e.ready:
			if e.err == nil {
				out[id] = e.b
			}
		default:
		}
	}
	return out
}

// ErrPoolClosed is returned by Get after Close.
var ErrPoolClosed = errors.New("tenant pool is closed")

// Get returns the tenant's kernel server, booting it on first use. Callers
// asking while it boots wait for that boot; a failed boot is reported to
// them and retried by the next Get.
func (p *TenantPool) Get(ctx context.Context, tenant string) (*Baseline, error) {
	if !ValidTenant(tenant) {
		return nil, fmt.Errorf("tenant pool: invalid tenant id %q: want 1-63 of a-z, 0-9, _ and -, starting with a letter or digit", tenant)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrPoolClosed
	}
	e, ok := p.tenants[tenant]
	if !ok {
		e = &tenantEntry{ready: make(chan struct{})}
		p.tenants[tenant] = e
		go p.boot(tenant, e)
	}
	e.used = p.opts.Now()
	p.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.b, e.err
}

// boot runs detached from any one request, so a cancelled request does not
// abort a boot others wait for.
func (p *TenantPool) boot(tenant string, e *tenantEntry) {
	ctx := context.Background()
	opts, err := p.tenantOptions(ctx, tenant)
	if err == nil {
		e.b, err = New(ctx, opts)
	}
	if err != nil {
		e.err = fmt.Errorf("tenant %s: %w", tenant, err)
		p.mu.Lock()
		if p.tenants[tenant] == e {
			delete(p.tenants, tenant) // the next Get retries
		}
		p.mu.Unlock()
	}
	close(e.ready)
}

// tenantOptions are the options of a tenant's kernel.
func (p *TenantPool) tenantOptions(ctx context.Context, tenant string) (Options, error) {
	if p.opts.Tenant != nil {
		opts, err := p.opts.Tenant(ctx, tenant)
		if opts.Name == "" {
			opts.Name = tenant
		}
		return opts, err
	}
	if p.opts.Open == nil {
		return Options{}, errors.New("the pool has neither Tenant nor Open")
	}
	st, err := p.opts.Open(ctx, tenant)
	opts := p.opts.Base
	opts.Name, opts.Store = tenant, st
	return opts, err
}

// Tenants lists the tenants whose kernels are running, sorted.
func (p *TenantPool) Tenants() []string {
	return slices.Sorted(maps.Keys(p.booted()))
}

// Evict closes a tenant's kernel; the next request boots it again from
// its store.
func (p *TenantPool) Evict(tenant string) error {
	p.mu.Lock()
	e := p.tenants[tenant]
	delete(p.tenants, tenant)
	p.mu.Unlock()
	return closeEntry(e)
}

// EvictIdle evicts every tenant idle for IdleAfter or longer and returns
// their ids.
func (p *TenantPool) EvictIdle() ([]string, error) {
	if p.opts.IdleAfter <= 0 {
		return nil, nil
	}
	now := p.opts.Now()
	p.mu.Lock()
	var idle []string
	for id, e := range p.tenants {
		if now.Sub(e.used) >= p.opts.IdleAfter {
			idle = append(idle, id)
		}
	}
	p.mu.Unlock()
	slices.Sort(idle)
	var errs []error
	for _, id := range idle {
		errs = append(errs, p.Evict(id))
	}
	return idle, errors.Join(errs...)
}

// Close closes every tenant's kernel; Get fails afterwards.
func (p *TenantPool) Close() error {
	p.mu.Lock()
	if !p.closed {
		close(p.stop)
	}
	p.closed = true
	entries := p.tenants
	p.tenants = map[string]*tenantEntry{}
	p.mu.Unlock()
	var errs []error
	for _, e := range entries {
		errs = append(errs, closeEntry(e))
	}
	return errors.Join(errs...)
}

func closeEntry(e *tenantEntry) error {
	if e == nil {
		return nil
	}
	<-e.ready
	if e.b == nil {
		return nil
	}
	return e.b.Close()
}

// Resolve returns the tenant a request is for (PoolOptions.Resolve).
func (p *TenantPool) Resolve(r *http.Request) string { return p.opts.Resolve(r) }

// ServeHTTP routes the request to its tenant's kernel; a request naming no
// tenant, or an invalid one, is a 400.
func (p *TenantPool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant := p.Resolve(r)
	if tenant == "" {
		if p.opts.OnMissing != nil {
			p.opts.OnMissing.ServeHTTP(w, r)
			return
		}
		smshttp.WriteError(w, smshttp.NewError(smshttp.KindValidation,
			"no tenant: send the "+p.opts.Header+" header or use a tenant subdomain such as acme.localhost"))
		return
	}
	if !ValidTenant(tenant) {
		smshttp.WriteError(w, smshttp.NewError(smshttp.KindValidation, fmt.Sprintf("invalid tenant id %q", tenant)))
		return
	}
	b, err := p.Get(r.Context(), tenant)
	if err != nil {
		smshttp.WriteError(w, err)
		return
	}
	b.ServeHTTP(w, r)
}
