package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
)

// errStopped ends a streamed turn whose consumer stopped reading.
var errStopped = errors.New("agentloop: the stream's consumer stopped reading")

// session is one conversation; mu makes its turns run one after another.
type session struct {
	mu      sync.Mutex
	loaded  bool // the store was asked for this session's transcript
	history []contracts.Message
}

func (s *service) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		sess = &session{}
		s.sessions[id] = sess
	}
	return sess
}

// Chat runs one turn.
func (s *service) Chat(ctx context.Context, session, text string) (Reply, error) {
	return s.turn(ctx, session, text, func(Event) bool { return true })
}

// ChatStream runs one turn, yielding its events as they happen.
func (s *service) ChatStream(ctx context.Context, session, text string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r, err := s.turn(ctx, session, text, func(e Event) bool { return yield(e, nil) })
		switch {
		case errors.Is(err, errStopped):
		case err != nil:
			yield(Event{Type: EventError, Error: err.Error()}, err)
		default:
			yield(Event{Type: EventDone, Reply: &r}, nil)
		}
	}
}

// turn runs the loop: call the model, run the tools it asks for, and
// repeat until it stops asking or MaxSteps calls were made. emit sees every
// event; when it returns false the turn ends with errStopped. A failed turn
// leaves the session's history as it was.
func (s *service) turn(ctx context.Context, id, text string, emit func(Event) bool) (Reply, error) {
	if id == "" || strings.TrimSpace(text) == "" {
		return Reply{}, fmt.Errorf("agentloop: a turn needs a session and a text")
	}
	sess := s.session(id)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if err := s.load(ctx, id, sess); err != nil {
		return Reply{}, err
	}
	budget, err := s.begin(ctx, callerOf(ctx).requester())
	if err != nil {
		return Reply{}, err
	}
	// A turn that fails or panics mid-step ends its run, so what the
	// step holds of its user's money comes back; finish runs once.
	defer func() { _ = budget.finish(context.WithoutCancel(ctx)) }()
	ctx = contracts.WithConversation(ctx, id) // a CLI driver keeps one session per conversation
	start := withUserText(sess.history, text)
	msgs, reply, err := s.steps(ctx, start, budget, emit)
	if err != nil {
		return Reply{}, err
	}
	if h := budget.halted; h != nil {
		reply.Halt = h
		if !emit(Event{Type: EventHalted, Text: "the turn stopped: " + h.Detail, Halt: h}) {
			return Reply{}, errStopped
		}
		if len(msgs) == len(start) {
			return reply, nil // stopped before its first step: nothing happened to keep or audit
		}
	} else if err := budget.finish(ctx); err != nil {
		return Reply{}, err
	}
	if s.opts.Sessions != nil {
		if err := s.opts.Sessions.Save(ctx, id, msgs); err != nil {
			return Reply{}, fmt.Errorf("agentloop: save session %s: %w", id, err)
		}
	}
	sess.history = msgs
	return reply, s.record(ctx, id, text, reply)
}

// steps runs the loop from msgs: call the model, run the tools it asks
// for, and repeat until it stops asking, MaxSteps calls were made or the
// budget halts the turn. Each model call and each tool call is a step of
// the turn's run. A halt before a model call ends the turn with the
// history as it is; one before a tool call answers that call and the
// rest of its round as not run, so the history stays well formed.
func (s *service) steps(ctx context.Context, msgs []contracts.Message, budget *budgetRun, emit func(Event) bool) ([]contracts.Message, Reply, error) {
	reply := Reply{Steps: []Step{}}
	for range s.opts.MaxSteps {
		ok, err := budget.next(ctx)
		if err != nil || !ok {
			return msgs, reply, err
		}
		resp, err := s.call(ctx, msgs, budget, emit)
		if err != nil {
			return nil, Reply{}, err
		}
		msgs = append(msgs, contracts.Message{Role: contracts.RoleAssistant, Content: resp.Content})
		reply.Reply = textOf(resp.Content)
		if resp.StopReason != contracts.StopToolUse {
			break
		}
		results, steps, err := s.runTools(ctx, resp.Content, budget, emit)
		if err != nil {
			return nil, Reply{}, err
		}
		reply.Steps = append(reply.Steps, steps...)
		msgs = append(msgs, contracts.Message{Role: contracts.RoleUser, Content: results})
		if budget.halted != nil {
			break
		}
	}
	return msgs, reply, nil
}

// load fills a session's history from the store the first time it is used;
// the caller holds sess.mu.
func (s *service) load(ctx context.Context, id string, sess *session) error {
	if sess.loaded || s.opts.Sessions == nil {
		return nil
	}
	history, err := s.opts.Sessions.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("agentloop: load session %s: %w", id, err)
	}
	sess.history, sess.loaded = history, true
	return nil
}

// withUserText returns a copy of history with the user's text appended,
// joined to a last user message (tool results of a turn cut short).
func withUserText(history []contracts.Message, text string) []contracts.Message {
	msgs := slices.Clone(history)
	b := contracts.Block{Type: contracts.BlockText, Text: text}
	if n := len(msgs); n > 0 && msgs[n-1].Role == contracts.RoleUser {
		msgs[n-1].Content = append(slices.Clone(msgs[n-1].Content), b)
		return msgs
	}
	return append(msgs, contracts.Message{Role: contracts.RoleUser, Content: []contracts.Block{b}})
}

func textOf(blocks []contracts.Block) string {
	var b strings.Builder
	for _, x := range blocks {
		if x.Type == contracts.BlockText {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// call makes one model call with the current tools, emitting text deltas.
// The call is the step budget handed out: it is recorded with its
// tokens, or as failed.
func (s *service) call(ctx context.Context, msgs []contracts.Message, budget *budgetRun, emit func(Event) bool) (contracts.ModelResponse, error) {
	req := contracts.ModelRequest{System: s.system(), Messages: msgs}
	for _, t := range s.toolset() {
		req.Tools = append(req.Tools, contracts.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	resp, err := s.stream(ctx, req, emit)
	if err != nil { // the provider may have billed the request: it is charged as estimated
		rec := contracts.StepUse{Kind: "model", Failed: err.Error(), Tokens: contracts.TokenEstimate(req, contracts.ModelResponse{})}
		return resp, errors.Join(err, budget.record(context.WithoutCancel(ctx), rec))
	}
	if err := budget.record(ctx, contracts.StepUse{Kind: "model", Name: resp.StopReason, Tokens: usageOf(req, resp)}); err != nil {
		return contracts.ModelResponse{}, err
	}
	return resp, nil
}

// stream makes the model call, emitting text deltas.
func (s *service) stream(ctx context.Context, req contracts.ModelRequest, emit func(Event) bool) (contracts.ModelResponse, error) {
	for ev, err := range contracts.Stream(ctx, s.model, req) {
		if err != nil {
			return contracts.ModelResponse{}, fmt.Errorf("agentloop: model: %w", err)
		}
		switch ev.Type {
		case contracts.EventTextDelta, contracts.EventThinkingDelta:
			typ := EventTextDelta
			if ev.Type == contracts.EventThinkingDelta {
				typ = EventThinkingDelta
			}
			if !emit(Event{Type: typ, Text: ev.Text}) {
				return contracts.ModelResponse{}, errStopped
			}
		case contracts.EventDone:
			if ev.Response != nil {
				return *ev.Response, nil
			}
		}
	}
	return contracts.ModelResponse{}, fmt.Errorf("agentloop: the model's stream ended without a response")
}

// runTools runs the tool_use blocks of a response in order and returns
// their tool_result blocks and steps.
// Each call is a step of budget's run; once the budget halts, the calls
// left are answered as not run.
func (s *service) runTools(ctx context.Context, content []contracts.Block, budget *budgetRun, emit func(Event) bool) ([]contracts.Block, []Step, error) {
	tools := map[string]Tool{}
	for _, t := range s.toolset() {
		tools[t.Name] = t
	}
	var results []contracts.Block
	var steps []Step
	for _, b := range content {
		if b.Type != contracts.BlockToolUse {
			continue
		}
		st := Step{ID: b.ID, Tool: b.Name, Input: b.Input}
		ok, err := budget.next(ctx)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			results = append(results, contracts.Block{Type: contracts.BlockToolResult, ToolUseID: b.ID, Content: notRun(budget.halted), IsError: true})
			continue
		}
		if !emit(Event{Type: EventToolCall, Step: &st}) {
			return nil, nil, errStopped
		}
		out, err := runTool(ctx, tools, b)
		if err := budget.record(ctx, contracts.StepUse{Kind: "tool", Name: b.Name}); err != nil {
			return nil, nil, err
		}
		if v, ok := out.(judge.Verdict); ok && !emit(Event{Type: EventVerdict, Verdict: &v}) {
			return nil, nil, errStopped
		}
		st.Result, st.IsError = resultText(out, err)
		if !emit(Event{Type: EventToolResult, Step: &st}) {
			return nil, nil, errStopped
		}
		steps = append(steps, st)
		results = append(results, contracts.Block{Type: contracts.BlockToolResult, ToolUseID: b.ID, Content: st.Result, IsError: st.IsError})
	}
	return results, steps, nil
}

// runTool checks a call's input and runs its handler; a panic is an error.
func runTool(ctx context.Context, tools map[string]Tool, b contracts.Block) (out any, err error) {
	t, ok := tools[b.Name]
	if !ok {
		return nil, fmt.Errorf("there is no tool %q", b.Name)
	}
	input, err := checkInput(t.InputSchema, b.Input)
	if err != nil {
		return nil, fmt.Errorf("invalid input for tool %s: %w", b.Name, err)
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("tool %s panicked: %v", b.Name, p)
		}
	}()
	return t.Handler(ctx, input)
}

// resultText is what the model sees of a tool's outcome.
func resultText(out any, err error) (string, bool) {
	if err != nil {
		return err.Error(), true
	}
	if str, ok := out.(string); ok {
		return str, false
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "the tool's result is not JSON: " + err.Error(), true
	}
	return string(raw), false
}

// turnRecord is the data of a chat/turn event.
type turnRecord struct {
	Session string   `json:"session"`
	Text    string   `json:"text"`
	Reply   string   `json:"reply"`
	Tools   []string `json:"tools"`
	// Halt is why the budget stopped the turn, when it did.
	Halt *contracts.BudgetHalt `json:"halt,omitempty"`
}

// record appends the chat/turn audit event; a turn that cannot be audited
// is reported as failed, though its history is kept.
func (s *service) record(ctx context.Context, id, text string, r Reply) error {
	rec := turnRecord{Session: id, Text: text, Reply: r.Reply, Tools: []string{}, Halt: r.Halt}
	for _, st := range r.Steps {
		rec.Tools = append(rec.Tools, st.Tool)
	}
	if err := s.k.Record(ctx, EventTurn, PluginID, rec); err != nil {
		return fmt.Errorf("agentloop: audit the turn: %w", err)
	}
	return nil
}
