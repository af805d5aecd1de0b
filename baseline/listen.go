package baseline

import (
	"net"
	"net/netip"
	"sync"
)

// limitListener returns ln accepting at most o.MaxConnections connections
// at once, and at most o.MaxConnectionsPerAddress from one client. Past the
// first bound, Accept waits until a connection closes, and the connections
// waiting stay in the operating system's listen queue; a connection from a
// client at the second bound is closed at once, so one client cannot keep
// the others (the kubelet's probes) waiting.
func limitListener(ln net.Listener, o ServeOptions) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, o.MaxConnections), done: make(chan struct{}),
		perClient: o.MaxConnectionsPerAddress, clients: map[netip.Prefix]int{}}
}

type limited struct {
	net.Listener
	slots     chan struct{} // one element per connection held
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	perClient int
	mu        sync.Mutex
	clients   map[netip.Prefix]int // connections held, by client
}

// Accept waits for a free slot, then for a connection from a client below
// its bound; it closes those from clients at their bound.
func (l *limited) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.slots
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		_ = c.Close()
		<-l.slots
	}
}

// admit counts c against its client's bound and returns it wrapped to give
// its slot and its client's place back on Close; nil when the client is at
// its bound.
func (l *limited) admit(c net.Conn) net.Conn {
	who := client(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[who] >= l.perClient {
		return nil
	}
	l.clients[who]++
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { l.release(who) })}
}

// release gives back the slot and the place of a connection of who.
func (l *limited) release(who netip.Prefix) {
	l.mu.Lock()
	if l.clients[who]--; l.clients[who] <= 0 {
		delete(l.clients, who)
	}
	l.mu.Unlock()
	<-l.slots
}

// client is who a connection from addr counts against: its IPv4 address,
// or its IPv6 /64 network (one host usually holds a whole /64). Addresses
// that are not TCP (a test's pipe) count as one client.
func client(addr net.Addr) netip.Prefix {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}
	}
	ip := tcp.AddrPort().Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits) // bits fit ip
	return p
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *limited) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitedConn gives its slot back when it is closed (the first time).
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
