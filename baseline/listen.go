package baseline

import (
	"net"
	"sync"
)

// limitListener returns ln accepting at most n connections at once: past
// that, Accept waits until one of them closes, and the connections waiting
// stay in the operating system's listen queue.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots     chan struct{} // one element per connection held
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// Accept waits for a free slot, then for a connection.
func (l *limited) Accept() (net.Conn, error) {
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
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *limited) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitedConn frees its slot when it is closed (the first time).
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
