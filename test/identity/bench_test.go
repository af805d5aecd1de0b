package identity

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
)

// BenchmarkORMRead is one ORM read (a search of 20 invoices) over HTTP,
// with users off (open, as local development runs) and on (a clerk's
// session cookie: session lookup, the rbac guard with the clerks' record
// rule, then the query). docs/benchmarks.md compares the two.
func BenchmarkORMRead(b *testing.B) {
	const body = `{"limit":20}`
	run := func(b *testing.B, e *env, h http.Header) {
		for i := 0; i < 20; i++ {
			r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": "N"}}, h)
			if r.Status != 201 {
				b.Fatalf("create: %d %s", r.Status, r.Body)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/api/orm/invoice/search", bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range h {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("search: %d %s", rec.Code, rec.Body)
			}
		}
	}
	b.Run("users=off", func(b *testing.B) {
		e := &env{t: b, Env: baselinetest.New(b, baselinetest.Options{Plugins: []kernel.Plugin{invoicing()}})}
		run(b, e, http.Header{})
	})
	b.Run("users=on", func(b *testing.B) {
		e := boot(b, nil, auth.Options{})
		run(b, e, e.user("cleo", "clerks"))
	})
}
