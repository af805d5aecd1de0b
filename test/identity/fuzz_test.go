package identity

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/plugins/auth"
)

// Any login body gets a 4xx with the error shape, or a 200 for the right
// password: never a 500 or a panic, and never a session for a wrong one.
func FuzzLoginBody(f *testing.F) {
	for _, seed := range []string{`{"login":"root","password":"root-password-1"}`, `{"login":"root"}`, `[]`, `"x"`,
		`{"login":1,"password":2}`, `{"login":"root","password":"root-password-1","x":1}`, "\x00", `{"login":"` + string(make([]byte, 70)) + `"}`} {
		f.Add([]byte(seed))
	}
	e := boot(f, nil, auth.Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, auth.RouteLogin, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(auth.CSRFHeader, "1")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		ok := string(body) == `{"login":"root","password":"root-password-1"}`
		if rec.Code == 200 && !ok || !slices.Contains([]int{200, 400, 401, 413, 429}, rec.Code) {
			t.Fatalf("login with %q = %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code != 200 && len(rec.Result().Cookies()) > 0 {
			t.Fatalf("a refused login set a cookie: %q", body)
		}
	})
}

// Any session cookie value is anonymous unless it is a live session's:
// never a 500, a panic or a principal.
func FuzzSessionCookie(f *testing.F) {
	for _, seed := range []string{"", "x", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "%00", "a b", string(make([]byte, 4096))} {
		f.Add(seed)
	}
	e := boot(f, nil, auth.Options{})
	f.Fuzz(func(t *testing.T, value string) {
		req := httptest.NewRequest(http.MethodGet, auth.RouteMe, nil)
		req.Header.Set("Cookie", auth.Cookie+"="+value)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != 200 || !bytes.Contains(rec.Body.Bytes(), []byte(`"authenticated":false`)) {
			t.Fatalf("cookie %q = %d %s", value, rec.Code, rec.Body)
		}
	})
}
