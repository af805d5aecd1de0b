package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

const doublerCode = `export default async function activate(cap) { await cap.contribute('tool', {name:'double', description:'x', input_schema:{type:'object', properties:{n:{type:'number'}}, required:['n']}, handler: async (i) => ({ doubled: i.n * 2 }) }) }`

// defineDoubler is a turn that submits the doubler plugin.
func defineDoubler() []contracts.Block {
	return []contracts.Block{toolUse("plugin_define", map[string]any{
		"manifest": map[string]any{"id": "agent.doubler", "version": "1", "points": []string{"tool"}}, "code": doublerCode})}
}

func toolUse(name string, input any) contracts.Block {
	raw, _ := json.Marshal(input)
	return contracts.Block{Type: contracts.BlockToolUse, Name: name, Input: raw}
}

func text(s string) []contracts.Block { return []contracts.Block{{Type: contracts.BlockText, Text: s}} }

// recorder is a model that records every request it receives.
type recorder struct {
	inner contracts.ModelService
	mu    sync.Mutex
	reqs  []contracts.ModelRequest
}

func record(turns ...[]contracts.Block) *recorder { return &recorder{inner: scripted.New(turns)} }

func (r *recorder) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.inner.Complete(ctx, req)
}

func (r *recorder) requests() []contracts.ModelRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contracts.ModelRequest(nil), r.reqs...)
}

func toolNames(req contracts.ModelRequest) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

func has(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// reply is the body of POST /api/chat.
type reply struct {
	Reply string `json:"reply"`
	Steps []struct {
		Tool    string `json:"tool"`
		Result  string `json:"result"`
		IsError bool   `json:"isError"`
	} `json:"steps"`
}

func chat(t *testing.T, env *baselinetest.Env, session, msg string) reply {
	t.Helper()
	res := env.Call("/api/chat", map[string]string{"session": session, "text": msg})
	if res.Status != http.StatusOK {
		t.Fatalf("POST /api/chat = %d %s", res.Status, res.Body)
	}
	var r reply
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// streamEvent is one SSE frame of /api/chat/stream.
type streamEvent struct {
	Type    string                         `json:"type"`
	Text    string                         `json:"text"`
	Step    *struct{ Tool, Result string } `json:"step"`
	Reply   *reply                         `json:"reply"`
	Verdict map[string]any                 `json:"verdict"`
}

func chatStream(t *testing.T, env *baselinetest.Env, session, msg string) []streamEvent {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"session": session, "text": msg})
	req := httptest.NewRequest(http.MethodPost, "/api/chat/stream", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	env.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("POST /api/chat/stream = %d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var out []streamEvent
	err := adminv1.ReadSSE(rec.Body, func(f adminv1.SSEFrame) error {
		var ev streamEvent
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			t.Fatalf("frame %q: %v", f.Data, err)
		}
		out = append(out, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventTypes lists the types in the event log.
func eventTypes(t *testing.T, env *baselinetest.Env) []string {
	t.Helper()
	res := env.Call("/api/events?limit=1000", nil)
	var body struct {
		Events []struct{ Type string } `json:"events"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range body.Events {
		out = append(out, e.Type)
	}
	return out
}

func fiberState(t *testing.T, env *baselinetest.Env, id string) string {
	t.Helper()
	res := env.Call("/api/state", nil)
	var body struct {
		Fibers []struct{ ID, State string } `json:"fibers"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, f := range body.Fibers {
		if f.ID == id {
			return f.State
		}
	}
	return ""
}
