package agentcli

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sms-baseline/sms/contracts"
)

// ServerName is the name the kernel's MCP server has in a CLI's
// configuration; the CLIs show its tools to their model as
// mcp__sms__<tool>.
const ServerName = "sms"

// maxRequestBytes bounds one MCP request from a CLI.
const maxRequestBytes = 4 << 20

// ToolServer serves one turn's tools to an agent CLI as an MCP server on
// loopback HTTP, behind a bearer token minted for it. Every call goes to
// the turn's sink, so it blocks until the agent loop answers it.
type ToolServer struct {
	// URL is the server's MCP endpoint.
	URL string
	// Token is the bearer token a request must carry.
	Token string

	srv       *http.Server
	announced chan struct{}
	gate      time.Duration
}

// ServeOptions configures a ToolServer.
type ServeOptions struct {
	// ReadOnly marks every tool read-only, for a CLI that runs only such
	// tools without asking (codex): the kernel's tools never touch the
	// host, and the judge is their gate.
	ReadOnly bool
	// Gate, when positive, holds each call until Announce was called
	// once for it, or Gate passed: a CLI prints the text it wrote before
	// a tool call, and the call must not overtake that text.
	Gate time.Duration
}

// Serve starts a ToolServer for tools on 127.0.0.1.
func Serve(tools []contracts.Tool, sink contracts.SessionSink, opts ServeOptions) (*ToolServer, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: "1"}, nil)
	s := &ToolServer{announced: make(chan struct{}, 64), gate: opts.Gate}
	for _, t := range tools {
		if err := addTool(server, t, opts.ReadOnly, s.handler(sink, t.Name)); err != nil {
			return nil, err
		}
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("agent CLI tools: token: %w", err)
	}
	s.Token = hex.EncodeToString(raw)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("agent CLI tools: listen: %w", err)
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxRequestBytes})
	s.srv = &http.Server{Handler: s.authorized(mcpHandler), ReadHeaderTimeout: 10 * time.Second}
	s.URL = "http://" + ln.Addr().String() + "/mcp"
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Announce says the CLI's output showed one tool call being made: one
// held call (or the next) may go on.
func (s *ToolServer) Announce() {
	select {
	case s.announced <- struct{}{}:
	default:
	}
}

// Close stops the server; calls still waiting fail.
func (s *ToolServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// authorized refuses a request without the server's bearer token.
func (s *ToolServer) authorized(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "this MCP server needs its bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// handler passes a call of the tool name to sink, after the gate.
func (s *ToolServer) handler(sink contracts.SessionSink, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s.gate > 0 {
			timer := time.NewTimer(s.gate)
			select {
			case <-s.announced:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		out, err := sink.ToolCall(ctx, name, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Content}}, IsError: out.IsError}, nil
	}
}

// addTool adds t to server. A schema the SDK refuses (not an object) is
// replaced by the empty object schema: the agent loop checks every input
// against the tool's own schema before its handler runs.
func addTool(server *mcp.Server, t contracts.Tool, readOnly bool, h mcp.ToolHandler) (err error) {
	schema := any(json.RawMessage(`{"type":"object"}`))
	var m map[string]any
	if json.Unmarshal(t.InputSchema, &m) == nil && m["type"] == "object" {
		schema = m
	}
	tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
	if readOnly {
		tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent CLI tools: tool %q: %v", t.Name, p)
		}
	}()
	server.AddTool(tool, h)
	return nil
}

// ToolName is the name a CLI gives its model for the kernel's tool name.
func ToolName(name string) string { return "mcp__" + ServerName + "__" + name }

// KernelTool returns the kernel's name for a CLI's name of one of its
// tools, and whether it is one.
func KernelTool(cliName string) (string, bool) {
	return strings.CutPrefix(cliName, "mcp__"+ServerName+"__")
}
