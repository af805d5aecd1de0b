package http

import (
	"net/http"
	"time"
)

// StreamWriteTimeout bounds each write of a streamed response (server-sent
// events). A stream lives as long as its client, past the server's read
// and write timeouts, but a client that takes no bytes for this long is
// dropped.
const StreamWriteTimeout = 30 * time.Second

// stream runs a Stream response. net/http lifts the read deadline once the
// request is read, so the stream ends when its client goes away; here a
// write deadline is set for each write alone, so the server's write
// timeout bounds a stalled write, not the stream's life. A writer without
// deadlines (a recorder in tests) streams as it is.
func stream(w http.ResponseWriter, fn func(http.ResponseWriter)) {
	fn(&streamWriter{ResponseWriter: w, rc: http.NewResponseController(w)})
}

// streamWriter sets a write deadline StreamWriteTimeout ahead for each
// write and flush, and lifts it after, so no deadline runs out while the
// stream waits for its next event.
type streamWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s *streamWriter) bounded(op func()) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
	op()
	_ = s.rc.SetWriteDeadline(time.Time{})
}

func (s *streamWriter) WriteHeader(status int) {
	s.bounded(func() { s.ResponseWriter.WriteHeader(status) })
}

func (s *streamWriter) Write(p []byte) (n int, err error) {
	s.bounded(func() { n, err = s.ResponseWriter.Write(p) })
	return n, err
}

// Flush implements http.Flusher.
func (s *streamWriter) Flush() { s.bounded(func() { _ = s.rc.Flush() }) }

// Unwrap lets an http.ResponseController reach the connection.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
