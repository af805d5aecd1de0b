package baseline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServeOptions configure Serve. The timeouts and the connection bounds
// hold on every listener; zero takes the default.
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
	// ReadHeaderTimeout bounds reading a request's headers (on a new
	// connection, from its start; waiting between requests is
	// IdleTimeout's). Default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included; net/http
	// lifts it once the request is read, so a handler that runs longer
	// keeps its context. Default DefaultReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its response. Streams (server-sent events) are exempt: each of
	// their writes is bounded by http.StreamWriteTimeout instead. Default
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next
	// request before it is closed. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections each listener holds at once.
	// Past it a connection is not accepted until one closes: it waits in
	// the operating system's listen queue and holds no file descriptor of
	// the process. Default DefaultMaxConnections.
	MaxConnections int
	// MaxConnectionsPerAddress bounds the connections one client holds at
	// once on each listener, so that one client cannot take every
	// connection of MaxConnections and leave none for the probes. A
	// connection from an address at its bound is closed at once rather
	// than left waiting. An IPv4 client is counted by its address, an IPv6
	// client by its /64 network. Keep it well below MaxConnections. Default
	// DefaultMaxConnectionsPerAddress, or MaxConnections when that is less.
	MaxConnectionsPerAddress int
}

// The defaults of ServeOptions.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 2 * time.Minute // a POST /api/chat turn answers within it; longer ones use the stream
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxConnections    = 512

	DefaultMaxConnectionsPerAddress = 64
)

func (o ServeOptions) withDefaults() ServeOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.TickEvery, time.Second)
	def(&o.ShutdownTimeout, 10*time.Second)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxConnectionsPerAddress <= 0 {
		o.MaxConnectionsPerAddress = min(DefaultMaxConnectionsPerAddress, o.MaxConnections)
	}
	return o
}

// server returns an http.Server of h with opts' timeouts.
func (o ServeOptions) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout}
}

// Serve serves b on ln and ticks its scheduler until ctx is done, then
// stops accepting requests and waits for those in flight. It does not close
// b: the caller closes the store after Serve returns.
func (b *Baseline) Serve(ctx context.Context, ln net.Listener, opts ServeOptions) error {
	opts = opts.withDefaults()
	servers := []*http.Server{opts.server(b)}
	listeners := []net.Listener{limitListener(ln, opts)}
	if opts.Admin != nil {
		servers[0].Handler = http.HandlerFunc(b.serveApp)
		servers = append(servers, opts.server(b))
		listeners = append(listeners, limitListener(opts.Admin, opts))
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
