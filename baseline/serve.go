package baseline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// TickEvery is how often the scheduler is ticked. Default one second.
	TickEvery time.Duration
	// ShutdownTimeout bounds how long in-flight requests may take to finish
	// once ctx is done. Default 10 seconds.
	ShutdownTimeout time.Duration
	// Admin, when set, is a listener of its own for the admin API: it
	// serves every route, and the main listener serves every route but the
	// admin API's (/healthz and /readyz answer on both). Serve owns it.
	Admin net.Listener
}

// Serve serves b on ln and ticks its scheduler until ctx is done, then
// stops accepting requests and waits for those in flight. It does not close
// b: the caller closes the store after Serve returns.
func (b *Baseline) Serve(ctx context.Context, ln net.Listener, opts ServeOptions) error {
	if opts.TickEvery <= 0 {
		opts.TickEvery = time.Second
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 10 * time.Second
	}
	servers := []*http.Server{{Handler: b, ReadHeaderTimeout: 10 * time.Second}}
	listeners := []net.Listener{ln}
	if opts.Admin != nil {
		servers[0].Handler = http.HandlerFunc(b.serveApp)
		servers = append(servers, &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, opts.Admin)
	}
	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(listeners[i]) }()
	}
	tick := time.NewTicker(opts.TickEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-served:
			return errors.Join(fmt.Errorf("serve: %w", err), shutdown(servers, served, len(servers)-1, opts.ShutdownTimeout))
		case now := <-tick.C:
			_ = b.Tick(ctx, now) // job failures are recorded by the scheduler itself
		case <-ctx.Done():
			return shutdown(servers, served, len(servers), opts.ShutdownTimeout)
		}
	}
}

// shutdown stops every server, waits for running of them to return from
// Serve, and reports what went wrong besides being closed.
func shutdown(servers []*http.Server, served <-chan error, running int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	for _, srv := range servers {
		err = errors.Join(err, srv.Shutdown(ctx))
	}
	for range running {
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
	}
	return err
}

// OpenStore opens the store a spec names: "sqlite:PATH" (the parent
// directory is created), "sqlite::memory:", or a postgres:// or
// postgresql:// URL with the tenant's schema ("public" when empty).
func OpenStore(ctx context.Context, spec, schema string) (contracts.Store, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, fmt.Errorf("open store: %q names no file: use sqlite:PATH", spec)
		}
		if path != sqlite.Memory {
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				return nil, fmt.Errorf("open store: %w", err)
			}
		}
		return sqlite.OpenStore(ctx, path)
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return postgres.OpenStore(ctx, postgres.Options{URL: spec, Schema: schema})
	}
	return nil, fmt.Errorf("open store: %q is neither sqlite:PATH nor a postgres:// URL", spec)
}
