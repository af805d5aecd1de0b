package services

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/objects/memory"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// scans adds a binary field to invoices.
func scans() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.scans", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{orm.FieldPoint: {orm.FieldContribution{Model: "invoice", Name: "scan", Field: orm.Field{Kind: orm.KindBinary}}}}}}
}

func keys(t *testing.T, st contracts.ObjectStore) []string {
	t.Helper()
	page, err := st.List(context.Background(), contracts.ListOptions{Prefix: "orm/"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range page.Objects {
		out = append(out, o.Key)
	}
	return out
}

func with(h http.Header, kv ...string) http.Header {
	out := h.Clone()
	for i := 0; i < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// TestFiles: a binary field's file is uploaded by whoever may write the
// record and downloaded by whoever may read it, as an attachment; a new
// upload replaces the file and deletes the old one; a write of the field
// by value is refused; unlinking the record deletes its file. Seen failing
// with the download guarded by nothing (carl got cleo's scan) and with the
// old file left behind by a new upload.
func TestFiles(t *testing.T) {
	st := memory.New()
	e := boot(t, options{objects: st, plugins: []kernel.Plugin{scans()}})
	cleo, carl, mia := e.user("cleo", "clerks"), e.user("carl", "clerks"), e.user("mia", "managers")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	path := fmt.Sprintf("/api/orm/invoice/%d/scan", id)
	r := e.Do("PUT", path, strings.NewReader("%PDF first"), with(cleo, "Content-Type", "application/pdf"))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"size":10`) || !strings.Contains(string(r.Body), `"type":"application/pdf"`) {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	r = e.Do("GET", path, nil, cleo)
	if r.Status != 200 || string(r.Body) != "%PDF first" {
		t.Fatalf("download: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		method string
		body   any
		want   int
	}{{"GET", nil, 404}, {"PUT", strings.NewReader("mine now"), 403}, {"DELETE", nil, 404}} {
		if r := e.Do(c.method, path, c.body, carl); r.Status != c.want {
			t.Fatalf("carl %s cleo's scan: %d %s, want %d", c.method, r.Status, r.Body, c.want)
		}
	}
	if r := e.Do("POST", "/api/orm/invoice/write", map[string]any{"ids": []int64{id}, "values": map[string]any{"scan": map[string]any{"key": "orm/x"}}}, cleo); r.Status != 400 {
		t.Fatalf("write the field by value: %d %s", r.Status, r.Body)
	}
	first := keys(t, st)
	if r := e.Do("PUT", path, strings.NewReader("%PDF second"), cleo); r.Status != 200 {
		t.Fatalf("second upload: %d %s", r.Status, r.Body)
	}
	if got := keys(t, st); len(got) != 1 || got[0] == first[0] {
		t.Fatalf("objects after a new upload: %v (before: %v)", got, first)
	}
	if r := e.Do("POST", "/api/orm/invoice/unlink", map[string]any{"ids": []int64{id}}, mia); r.Status != 200 {
		t.Fatalf("unlink: %d %s", r.Status, r.Body)
	}
	if got := keys(t, st); len(got) != 0 {
		t.Fatalf("objects after the unlink: %v", got)
	}
}

// TestFileBounds: a partial upload leaves no file and no change; a file
// past the size limit, and one past the tenant's quota, are refused naming
// the limit. Seen failing with the quota not counting the stored files (the
// third upload passed).
func TestFileBounds(t *testing.T) {
	st := memory.New()
	e := boot(t, options{objects: st, plugins: []kernel.Plugin{scans()}, orm: orm.Options{Objects: orm.ObjectLimits{MaxBytes: 100, MaxStored: 150}}})
	cleo := e.user("cleo", "clerks")
	a, b, c := e.create(cleo, map[string]any{"number": "A"}), e.create(cleo, map[string]any{"number": "B"}), e.create(cleo, map[string]any{"number": "C"})
	up := func(id int64, body string, length int64) (int, string) {
		req := httptest.NewRequest("PUT", fmt.Sprintf("/api/orm/invoice/%d/scan", id), strings.NewReader(body))
		req.ContentLength = length // a body that ends before it, as a dropped connection does
		for k, v := range cleo {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := up(a, strings.Repeat("x", 101), 101); code != 413 || !strings.Contains(body, "the limit is 100 bytes per file") {
		t.Fatalf("too large: %d %s", code, body)
	}
	if code, _ := up(a, strings.Repeat("x", 80), 80); code != 200 {
		t.Fatalf("a file: %d", code)
	}
	if code, body := up(b, strings.Repeat("x", 50), 50); code != 200 {
		t.Fatalf("a second file: %d %s", code, body)
	}
	if code, body := up(c, strings.Repeat("x", 30), 30); code != 413 || !strings.Contains(body, "the limit of 150 bytes for this tenant's files") {
		t.Fatalf("past the quota: %d %s", code, body)
	}
	before := keys(t, st)
	if code, body := up(c, "only ten b", 20); code != 400 || !strings.Contains(body, "size mismatch") {
		t.Fatalf("a partial upload: %d %s", code, body)
	}
	if got := keys(t, st); len(got) != len(before) {
		t.Fatalf("a partial upload left objects %v (before %v)", got, before)
	}
	recs, _ := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{c}, orm.ReadSpec{"scan": nil})
	if recs[0]["scan"] != nil {
		t.Fatalf("a partial upload changed the record: %v", recs[0])
	}
}

// holding is an object store whose puts wait until released, so a test
// can keep uploads in flight.
type holding struct {
	contracts.ObjectStore
	entered chan struct{}
	release chan struct{}
}

func (h *holding) Put(ctx context.Context, key string, body io.Reader, o contracts.PutOptions) (contracts.ObjectInfo, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.ObjectStore.Put(ctx, key, body, o)
}

// TestUploadsInFlight: a caller with as many uploads in flight as the
// limit is refused another, naming the limit, while another caller's
// upload goes on; once the uploads end the caller may upload again. Seen
// failing with the per-caller count removed from reserve (the third
// upload waited in the store).
func TestUploadsInFlight(t *testing.T) {
	st := &holding{ObjectStore: memory.New(), entered: make(chan struct{}, 8), release: make(chan struct{})}
	e := boot(t, options{objects: st, plugins: []kernel.Plugin{scans()}, orm: orm.Options{Objects: orm.ObjectLimits{PerCaller: 2}}})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	ids := []int64{e.create(cleo, map[string]any{"number": "A"}), e.create(cleo, map[string]any{"number": "B"}), e.create(cleo, map[string]any{"number": "C"})}
	mine := e.create(carl, map[string]any{"number": "D"})
	up := func(h http.Header, id int64) baselinetest.Response {
		return e.Do("PUT", fmt.Sprintf("/api/orm/invoice/%d/scan", id), strings.NewReader("scan"), h)
	}
	done := make(chan baselinetest.Response, 3)
	for _, id := range ids[:2] {
		go func() { done <- up(cleo, id) }()
	}
	<-st.entered
	<-st.entered
	third := make(chan baselinetest.Response, 1)
	go func() { third <- up(cleo, ids[2]) }()
	select {
	case r := <-third:
		if r.Status != 429 || !strings.Contains(string(r.Body), "has 2 uploads in flight; the limit is 2 per caller") {
			t.Fatalf("a third upload in flight: %d %s", r.Status, r.Body)
		}
	case <-st.entered:
		close(st.release)
		t.Fatal("a third upload in flight reached the store")
	}
	go func() { done <- up(carl, mine) }()
	<-st.entered // carl's upload is not held back by cleo's
	close(st.release)
	for range 3 {
		if r := <-done; r.Status != 200 {
			t.Fatalf("an upload in flight: %d %s", r.Status, r.Body)
		}
	}
	go func() { <-st.entered }()
	if r := up(cleo, ids[2]); r.Status != 200 {
		t.Fatalf("an upload after the others ended: %d %s", r.Status, r.Body)
	}
}

// TestFilesOutliveDisable: disabling the plugin that declares a binary
// field keeps its files; enabling it again serves them as before. The
// field withdraws the same way whoever declared it, so the test disables
// a system plugin with ForceDisable. Seen failing with the files dropped
// when the field leaves the schema (a withdraw observer that deleted
// the files under orm/).
func TestFilesOutliveDisable(t *testing.T) {
	st := memory.New()
	e := boot(t, options{objects: st, plugins: []kernel.Plugin{scans()}})
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "A"})
	path := fmt.Sprintf("/api/orm/invoice/%d/scan", id)
	if r := e.Do("PUT", path, strings.NewReader("%PDF kept"), cleo); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	if err := e.Kernel.ForceDisable(ctx, "app.scans"); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, st); len(got) != 1 {
		t.Fatalf("objects after disabling the plugin: %v", got)
	}
	if r := e.Do("GET", path, nil, cleo); r.Status != 400 || !strings.Contains(string(r.Body), "has no binary field") {
		t.Fatalf("download with the field gone: %d %s", r.Status, r.Body)
	}
	if err := e.Kernel.Enable(ctx, "app.scans"); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("GET", path, nil, cleo); r.Status != 200 || string(r.Body) != "%PDF kept" {
		t.Fatalf("download after enabling again: %d %s", r.Status, r.Body)
	}
}
