package services

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkFiftyReads reads 50 invoices one by one: 50 REST calls, or one
// /api/rpc batch of 50 read calls, over loopback HTTP in the same run.
func BenchmarkFiftyReads(b *testing.B) {
	e := boot(b, options{})
	srv := httptest.NewServer(e.Baseline)
	b.Cleanup(srv.Close)
	admin := bearer(token)
	ids := make([]int64, 50)
	for i := range ids {
		ids[i] = e.create(admin, map[string]any{"number": "INV-" + string(rune('A'+i%26)) + string(rune('a'+i/26)), "amount": float64(i)})
	}
	spec := map[string]any{"number": map[string]any{}, "amount": map[string]any{}, "state": map[string]any{}}
	post := func(path string, body any) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	b.Run("via=rest", func(b *testing.B) {
		for b.Loop() {
			for _, id := range ids {
				post("/api/orm/invoice/read", map[string]any{"ids": []int64{id}, "spec": spec})
			}
		}
	})
	batch := make([]any, len(ids))
	for i, id := range ids {
		batch[i] = call(i, "read", "invoice", []int64{id}, spec)
	}
	b.Run("via=rpc", func(b *testing.B) {
		for b.Loop() {
			post("/api/rpc", batch)
		}
	})
}
