package contracts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of SessionOptions.
const (
	DefaultSessionMaxLive          = 4
	DefaultSessionMaxConversations = 1024
	DefaultSessionToolWait         = 10 * time.Minute
	DefaultSessionMaxPrior         = 64 << 10
	DefaultSessionAbandonAfter     = 2 * time.Minute
	DefaultSessionMaxTurn          = 30 * time.Minute
)

// SessionOptions configures a SessionModel.
type SessionOptions struct {
	// Name names the driver in errors ("claude-cli").
	Name string
	// MaxLive bounds the turns running at once, each a CLI process;
	// a turn past it is refused. Zero means DefaultSessionMaxLive.
	MaxLive int
	// MaxConversations bounds the conversations whose CLI session is
	// kept for resuming; past it the least recently used is forgotten
	// (its next turn starts a new session). Zero means the default.
	MaxConversations int
	// ToolWait is how long a CLI's tool call waits for the agent loop's
	// answer before it fails. Zero means DefaultSessionToolWait.
	ToolWait time.Duration
	// MaxPrior bounds, in bytes, the conversation so far that a new
	// session's prompt carries (its most recent part). Zero means
	// DefaultSessionMaxPrior.
	MaxPrior int
	// AbandonAfter is how long a turn may wait for the agent loop's
	// tool result before a turn of another conversation, finding no
	// place, stops it (a loop that hit its step limit never answers).
	// Zero means DefaultSessionAbandonAfter.
	AbandonAfter time.Duration
	// MaxTurn bounds a whole CLI turn, tool calls included: past it the
	// CLI is stopped and the call fails. Zero means
	// DefaultSessionMaxTurn.
	MaxTurn time.Duration
}

// SessionModel is a ModelService over an agent CLI's SessionBackend, one
// CLI session per conversation (ConversationOf), resumed while the system
// prompt and the history stay the same, started anew with the
// conversation so far in its prompt when they do not. It is safe for
// concurrent use; calls of one conversation run one after another.
type SessionModel struct {
	backend SessionBackend
	opts    SessionOptions
	slots   chan struct{} // one per live turn

	mu    sync.Mutex
	convs map[string]*conversation
}

var _ ModelService = (*SessionModel)(nil)

// NewSessionModel returns a SessionModel running backend's turns.
func NewSessionModel(backend SessionBackend, opts SessionOptions) *SessionModel {
	if opts.MaxLive <= 0 {
		opts.MaxLive = DefaultSessionMaxLive
	}
	if opts.MaxConversations <= 0 {
		opts.MaxConversations = DefaultSessionMaxConversations
	}
	if opts.ToolWait <= 0 {
		opts.ToolWait = DefaultSessionToolWait
	}
	if opts.MaxPrior <= 0 {
		opts.MaxPrior = DefaultSessionMaxPrior
	}
	if opts.AbandonAfter <= 0 {
		opts.AbandonAfter = DefaultSessionAbandonAfter
	}
	if opts.MaxTurn <= 0 {
		opts.MaxTurn = DefaultSessionMaxTurn
	}
	if opts.Name == "" {
		opts.Name = "session model"
	}
	return &SessionModel{backend: backend, opts: opts, slots: make(chan struct{}, opts.MaxLive),
		convs: map[string]*conversation{}}
}

// conversation is one conversation's CLI session; mu orders its calls.
type conversation struct {
	mu     sync.Mutex
	used   time.Time
	resume string // the CLI's session id after the last finished turn
	system string // the system prompt that session was started with
	next   int    // the message count of the next turn continuing it: this turn's, its reply and the new message
	live   *liveTurn
	asked  time.Time // when the live turn's last tool call went to the agent loop
	users  int       // calls holding it, under SessionModel.mu: it is not forgotten while any does
}

// Complete continues the conversation's running turn with the tool
// results req ends with, or starts a turn for its last user message, and
// returns what the CLI did up to its next tool call or the turn's end.
func (m *SessionModel) Complete(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return ModelResponse{}, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != RoleUser {
		return ModelResponse{}, fmt.Errorf("%s: a request must end with a user message", m.opts.Name)
	}
	c := m.conversation(ConversationOf(ctx), req)
	defer m.release(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	last := req.Messages[n-1]
	if c.live == nil || !c.live.answers(last) {
		m.stop(c)
		if err := m.begin(c, req); err != nil {
			return ModelResponse{}, err
		}
	} else {
		c.live.deliver(last)
	}
	return m.await(ctx, c, req)
}

// Close stops every running turn.
func (m *SessionModel) Close() {
	m.mu.Lock()
	convs := make([]*conversation, 0, len(m.convs))
	for _, c := range m.convs {
		convs = append(convs, c)
	}
	m.mu.Unlock()
	for _, c := range convs {
		c.mu.Lock()
		m.stop(c)
		c.mu.Unlock()
	}
}

// conversation returns the state of the conversation id, or of the one
// req's first message starts when id is empty, forgetting the least
// recently used idle one past MaxConversations.
func (m *SessionModel) conversation(id string, req ModelRequest) *conversation {
	if id == "" {
		raw, _ := json.Marshal(req.Messages[0])
		sum := sha256.Sum256(raw)
		id = "first:" + hex.EncodeToString(sum[:])
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.convs[id]
	if !ok {
		if len(m.convs) >= m.opts.MaxConversations {
			m.forgetOldest()
		}
		c = &conversation{}
		m.convs[id] = c
	}
	c.used = time.Now()
	c.users++
	return c
}

// release ends a call's hold on c.
func (m *SessionModel) release(c *conversation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.users--
}

// forgetOldest drops the least recently used conversation without a live
// turn; the caller holds m.mu.
func (m *SessionModel) forgetOldest() {
	var oldest string
	var at time.Time
	for id, c := range m.convs {
		if c.users > 0 || !c.mu.TryLock() {
			continue
		}
		idle := c.live == nil
		c.mu.Unlock()
		if idle && (oldest == "" || c.used.Before(at)) {
			oldest, at = id, c.used
		}
	}
	if oldest != "" {
		delete(m.convs, oldest)
	}
}

// begin starts a turn for req's last user message; the caller holds c.mu
// and c has no live turn.
func (m *SessionModel) begin(c *conversation, req ModelRequest) error {
	if !m.slot() {
		return fmt.Errorf("%s: %d turns are running, the most this model runs at once (SessionOptions.MaxLive); try again when one ends",
			m.opts.Name, m.opts.MaxLive)
	}
	n := len(req.Messages)
	last := req.Messages[n-1]
	turn := SessionTurn{System: req.System, Tools: req.Tools, Prompt: textOfBlocks(last.Content)}
	if c.resume != "" && c.system == req.System && c.next == n && !hasResults(last) {
		turn.Resume = c.resume
	} else {
		// A new session hears the conversation so far, with the tool
		// results the last message carries (a turn the agent loop cut
		// at its step limit): the model must not run those tools again.
		prior := append(req.Messages[:n-1:n-1], Message{Role: last.Role, Content: nonText(last.Content)})
		turn.Prompt = priorTranscript(prior, m.opts.MaxPrior) + turn.Prompt
	}
	c.resume = ""
	c.live = m.run(turn)
	return nil
}

// slot takes a place for a live turn. When none is free, it stops the
// turn that has waited longest, past AbandonAfter, for the agent loop's
// tool result: a turn the loop left (at its step limit, or on an error)
// must not hold its place until ToolWait ends.
func (m *SessionModel) slot() bool {
	select {
	case m.slots <- struct{}{}:
		return true
	default:
	}
	m.mu.Lock()
	var idle *conversation
	for _, c := range m.convs {
		if !c.mu.TryLock() {
			continue
		}
		abandoned := c.live != nil && !c.asked.IsZero() && time.Since(c.asked) > m.opts.AbandonAfter
		if abandoned && (idle == nil || c.asked.Before(idle.asked)) {
			if idle != nil {
				idle.mu.Unlock()
			}
			idle = c
			continue
		}
		c.mu.Unlock()
	}
	m.mu.Unlock()
	if idle == nil {
		return false
	}
	m.stop(idle)
	idle.mu.Unlock()
	select {
	case m.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// stop ends c's live turn, if any, and waits for its CLI to exit; the
// caller holds c.mu.
func (m *SessionModel) stop(c *conversation) {
	if c.live == nil {
		return
	}
	c.live.cancel()
	<-c.live.done
	c.live = nil
	<-m.slots
}

// await returns what the live turn does up to its next tool call or its
// end; the caller holds c.mu.
func (m *SessionModel) await(ctx context.Context, c *conversation, req ModelRequest) (ModelResponse, error) {
	t := c.live
	for {
		select {
		case <-ctx.Done():
			m.stop(c)
			return ModelResponse{}, fmt.Errorf("%s: %w", m.opts.Name, ctx.Err())
		case <-t.done:
			// The turn ended without a word: it ran past MaxTurn.
			c.live = nil
			<-m.slots
			return ModelResponse{}, fmt.Errorf("%s: the turn was stopped after %s: %w", m.opts.Name, m.opts.MaxTurn, t.ctx.Err())
		case ev := <-t.events:
			if ev.call != nil {
				t.pending[ev.call.ID] = ev.reply
				c.asked = time.Now()
				content := append(t.take(), *ev.call)
				return ModelResponse{Content: content, StopReason: StopToolUse}, nil
			}
			if !ev.end {
				t.add(ev.block)
				continue
			}
			c.live = nil
			<-m.slots
			if ev.err != nil {
				return ModelResponse{}, fmt.Errorf("%s: %w", m.opts.Name, ev.err)
			}
			c.resume, c.system, c.next = ev.resume, req.System, len(req.Messages)+2
			return ModelResponse{Content: t.take(), StopReason: StopEndTurn}, nil
		}
	}
}

// errTurnEnded is what a tool call still waiting when its turn ends gets.
var errTurnEnded = errors.New("the turn ended before the tool call was answered")

func hasResults(msg Message) bool {
	for _, b := range msg.Content {
		if b.Type == BlockToolResult {
			return true
		}
	}
	return false
}

func nonText(blocks []Block) []Block {
	var out []Block
	for _, b := range blocks {
		if b.Type != BlockText {
			out = append(out, b)
		}
	}
	return out
}

func textOfBlocks(blocks []Block) string {
	var s string
	for _, b := range blocks {
		if b.Type == BlockText {
			if s != "" {
				s += "\n"
			}
			s += b.Text
		}
	}
	return s
}
