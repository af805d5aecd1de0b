package adminv1

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// MaxFrameBytes bounds one line of a server-sent event stream, and so the
// JSON of one event: ReadSSE refuses a longer line.
const MaxFrameBytes = 4 << 20

// EventStreamType is the content type of a server-sent event stream.
const EventStreamType = "text/event-stream"

// SSEWriter writes a server-sent event stream: one "data:" line of JSON
// per event, with an "id:" line when the event has one, and comment lines
// as keepalives. It is the only writer of the admin API's streams.
type SSEWriter struct {
	w http.ResponseWriter
}

// StartSSE answers 200 with the headers of an event stream and flushes
// them, and returns the writer of its events.
func StartSSE(w http.ResponseWriter) *SSEWriter {
	w.Header().Set("Content-Type", EventStreamType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &SSEWriter{w: w}
	return s
}

// Send writes v as one event, with id unless id is empty. It does not
// flush: call Flush after the events at hand. An error means the client
// went away (or v does not encode).
func (s *SSEWriter) Send(id string, v any) error {
	raw, err := json.Marshal(v) // compact: one line
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	var b bytes.Buffer
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(raw)
	b.WriteString("\n\n")
	_, err = s.w.Write(b.Bytes())
	return err
}

// Comment writes a comment line, which readers skip: a keepalive.
func (s *SSEWriter) Comment(text string) error {
	_, err := io.WriteString(s.w, ": "+text+"\n\n")
	return err
}

// Flush sends what was written to the client.
func (s *SSEWriter) Flush() {
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// SSEFrame is one event read from a stream: its id ("" when it has none)
// and its data, the "data:" lines joined.
type SSEFrame struct {
	ID   string
	Data []byte
}

// ReadSSE calls fn with each event of r until r ends, fn returns an
// error, or a line exceeds MaxFrameBytes. Comments and fields other than
// id and data are skipped. Frame.Data is reused after fn returns. It is
// the only reader of the admin API's streams.
func ReadSSE(r io.Reader, fn func(SSEFrame) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxFrameBytes)
	var f SSEFrame
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if len(f.Data) > 0 {
				if err := fn(f); err != nil {
					return err
				}
			}
			f = SSEFrame{Data: f.Data[:0]}
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			f.Data = append(f.Data, bytes.TrimPrefix(rest, []byte(" "))...)
		} else if rest, ok := bytes.CutPrefix(line, []byte("id:")); ok {
			f.ID = string(bytes.TrimPrefix(rest, []byte(" ")))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("kernel admin api: read stream: %w", err)
	}
	if len(f.Data) > 0 {
		return fn(f)
	}
	return nil
}
