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

// BenchmarkORMRead is one ORM read over HTTP (search: the ids of 20
// invoices; read: 20 invoices' number and amount, a page of a list view),
// with users off (open, as local development runs) and on (a clerk's
// session cookie: session lookup, the rbac guard with the clerks' record
// rule, then the query). docs/benchmarks.md compares the two.
func BenchmarkORMRead(b *testing.B) {
	routes := map[string]string{"search": `{"limit":20}`, "read": `{"ids":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],"spec":{"number":null,"amount":null}}`}
	// The kernels and their 20 invoices are made once: b.Run calls its
	// function again for every b.N it tries.
	fill := func(e *env, h http.Header) {
		for i := 0; i < 20; i++ {
			r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": "N"}}, h)
			if r.Status != 201 {
				b.Fatalf("create: %d %s", r.Status, r.Body)
			}
		}
	}
	off := &env{t: b, Env: baselinetest.New(b, baselinetest.Options{Approvals: true, Plugins: []kernel.Plugin{invoicing()}})}
	fill(off, http.Header{})
	on := boot(b, nil, auth.Options{})
	cleo := on.user("cleo", "clerks")
	fill(on, cleo)
	run := func(b *testing.B, e *env, h http.Header, route string) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/api/orm/invoice/"+route, bytes.NewReader([]byte(routes[route])))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range h {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("%s: %d %s", route, rec.Code, rec.Body)
			}
		}
	}
	for _, route := range []string{"search", "read"} {
		b.Run(route+"/users=off", func(b *testing.B) { run(b, off, http.Header{}, route) })
		b.Run(route+"/users=on", func(b *testing.B) { run(b, on, cleo, route) })
	}
}
