package isolated

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// The protocol: newline-delimited JSON messages in both directions over the
// child's stdin and stdout. Either side sends requests (ID set, numbered by
// the sender) and answers the other side's requests (Reply set to that ID).
//
//	parent -> child: load (Text: code, Config), activate, call (Name: function id,
//	                 Data: arguments), cancel (ID of the request to cancel)
//	child -> parent: get, invoke, provide, contribute (Name, Method, Data), each
//	                 tagged with Job, the parent request it serves, and Live, the
//	                 child's host calls awaiting an answer; log (no reply)
//
// The child writes what it has to say after it has run every slice a message
// of the parent started, all at once: host calls a slice made go out together,
// and Live tells the parent whether the child can say anything more before
// one is answered (Live is 1).
//
// A reply carries Data or Text as its result, or Error and Kind.
const (
	opLoad       = "load"
	opActivate   = "activate"
	opCall       = "call"
	opCancel     = "cancel"
	opGet        = "get"
	opInvoke     = "invoke"
	opProvide    = "provide"
	opContribute = "contribute"
	opLog        = "log"
	opWarm       = "warm"
	opReset      = "reset"
)

// Error kinds that survive the crossing, so errors.Is keeps working.
const (
	kindDeadline = "deadline"
	kindClosed   = "closed"
	kindCanceled = "canceled"
	kindStopped  = "stopped" // kernel.ErrUnitStopped; with the kind of its cause after a comma
	kindByCaller = "caller"  // kernel.ErrStoppedByCaller, after "stopped"
)

// maxMessage bounds one message: a snapshot, escaped, plus the code of a plugin.
const maxMessage = 3*kernel.MaxSnapshotBytes + goja.DefaultMaxSourceBytes*2

type message struct {
	ID     uint64          `json:"id,omitempty"`
	Reply  uint64          `json:"reply,omitempty"`
	Job    uint64          `json:"job,omitempty"`
	Live   int             `json:"live,omitempty"`
	Op     string          `json:"op,omitempty"`
	Plugin string          `json:"plugin,omitempty"`
	Name   string          `json:"name,omitempty"`
	Method string          `json:"method,omitempty"`
	Level  string          `json:"level,omitempty"`
	Text   string          `json:"text,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Config *config         `json:"config,omitempty"`
}

// config is the part of goja.Options that crosses into the child.
type config struct {
	Deadline         time.Duration `json:"deadline"`
	Grace            time.Duration `json:"grace"`
	MaxCallStackSize int           `json:"maxCallStackSize"`
	MaxSourceBytes   int           `json:"maxSourceBytes"`
	MaxSourceNesting int           `json:"maxSourceNesting"`
}

func (c config) options() goja.Options {
	return goja.Options{Deadline: c.Deadline, Grace: c.Grace, MaxCallStackSize: c.MaxCallStackSize,
		MaxSourceBytes: c.MaxSourceBytes, MaxSourceNesting: c.MaxSourceNesting}
}

// conn is one end of the protocol. send is safe for concurrent use; recv is
// called by one reader goroutine.
type conn struct {
	mu sync.Mutex
	w  io.Writer
	r  *bufio.Reader
	// line holds what recv has read of the next message; a read that
	// fails (a deadline) leaves it for the next recv.
	line []byte
	// writeWait, when set and w takes deadlines, bounds every write: the
	// parent never waits longer than that for a child to read.
	writeWait time.Duration
}

func newConn(r io.Reader, w io.Writer) *conn {
	return &conn{w: w, r: bufio.NewReaderSize(r, 64<<10)}
}

func (c *conn) send(m message) error {
	return c.sendAll([]message{m})
}

// sendAll writes ms in one write.
func (c *conn) sendAll(ms []message) error {
	var raw []byte
	for _, m := range ms {
		one, err := json.Marshal(m)
		if err != nil && m.Reply != 0 {
			// A reply that cannot be encoded still answers, with why.
			one, err = json.Marshal(failure(message{Reply: m.Reply}, fmt.Errorf("encode the reply: %w", err)))
		}
		if err != nil {
			return fmt.Errorf("encode %s message: %w", m.Op, err)
		}
		raw = append(append(raw, one...), '\n')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.w.(interface{ SetWriteDeadline(time.Time) error }); ok && c.writeWait > 0 {
		if err := d.SetWriteDeadline(time.Now().Add(c.writeWait)); err != nil {
			return fmt.Errorf("write %s message: %w", ms[0].Op, err)
		}
	}
	if _, err := c.w.Write(raw); err != nil {
		return fmt.Errorf("write %s message: %w", ms[0].Op, err)
	}
	return nil
}

// recv reads the next message. It is called by one goroutine at a time.
func (c *conn) recv() (message, error) {
	for {
		chunk, err := c.r.ReadSlice('\n')
		c.line = append(c.line, chunk...)
		if len(c.line) > maxMessage {
			return message{}, fmt.Errorf("a message is longer than %d bytes", maxMessage)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return message{}, err
		}
		break
	}
	line := c.line
	c.line = c.line[:0]
	if cap(line) > 64<<10 {
		c.line = nil // do not keep a large message's buffer
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return message{}, fmt.Errorf("decode message: %w", err)
	}
	return m, nil
}

// kindOf classifies an error for the crossing.
func kindOf(err error) string {
	var kinds []string
	if errors.Is(err, kernel.ErrUnitStopped) {
		kinds = append(kinds, kindStopped)
		if errors.Is(err, kernel.ErrStoppedByCaller) {
			kinds = append(kinds, kindByCaller)
		}
	}
	if cause := causeKind(err); cause != "" {
		kinds = append(kinds, cause)
	}
	return strings.Join(kinds, ",")
}

func causeKind(err error) string {
	switch {
	case errors.Is(err, goja.ErrDeadline), errors.Is(err, context.DeadlineExceeded):
		return kindDeadline
	case errors.Is(err, goja.ErrClosed):
		return kindClosed
	case errors.Is(err, context.Canceled):
		return kindCanceled
	}
	return ""
}

// remoteError is an error that crossed the pipe: its text, and the sentinel
// its kind names, so errors.Is(err, goja.ErrDeadline) holds on both sides.
type remoteError struct {
	msg   string
	kinds []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.kinds }

// kinds maps a crossing's kind names to their sentinels.
var kinds = map[string]error{
	kindDeadline: goja.ErrDeadline, kindClosed: goja.ErrClosed, kindCanceled: context.Canceled,
	kindStopped: kernel.ErrUnitStopped, kindByCaller: kernel.ErrStoppedByCaller,
}

func errorOf(m message) error {
	if m.Error == "" {
		return nil
	}
	e := &remoteError{msg: m.Error}
	for _, name := range strings.Split(m.Kind, ",") {
		if kind, ok := kinds[name]; ok {
			e.kinds = append(e.kinds, kind)
		}
	}
	return e
}

// failure fills a reply's error fields.
func failure(m message, err error) message {
	if err != nil {
		m.Error, m.Kind = err.Error(), kindOf(err)
	}
	return m
}
