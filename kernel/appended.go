package kernel

import "sync"

// Appended returns a channel that is closed the next time this kernel
// appends an event to its log. A reader that follows the log takes the
// channel first, then reads with Events, then waits on the channel: an
// event appended after the read closes the channel it holds, so none is
// missed, and a reader waiting costs nothing until then. Safe for
// concurrent use.
func (k *Kernel) Appended() <-chan struct{} { return k.appended.next() }

// appendSignal is a broadcast: every channel next handed out is closed by
// the following broadcast. The zero value is ready to use.
type appendSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *appendSignal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *appendSignal) broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
