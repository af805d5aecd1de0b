package orm_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// restCall is one request of TestREST.
type restCall struct{ token, method, path, body string }

// call sends a JSON request as the credential token ("" for none) and
// returns the status and decoded body.
func (e *agentEnv) call(t *testing.T, c restCall) (int, map[string]any) {
	t.Helper()
	token, method, path, body := c.token, c.method, c.path, c.body
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" && !strings.Contains(path, "read_group") {
		r.Header.Set("Content-Type", "application/json")
	} // read_group is sent as curl -d sends it, with a form content type
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	raw, _ := io.ReadAll(w.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body %q is not JSON: %v", method, path, raw, err)
	}
	return w.Code, out
}

// The calls a UI makes, each acting for its credential's user.
func TestREST(t *testing.T) {
	e := bootGuarded(t)
	for _, c := range []struct {
		token, method, path, body string
		status                    int
		want                      string // a fragment of the JSON answer
	}{
		{"bob-token", "GET", "/api/orm", "", 200, `"models":["contact","country","invoice","invoice_line","tag"]`},
		{"bob-token", "GET", "/api/orm/invoice/spec", "", 200, `"name":"partner_email"`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"domain":[],"spec":{"number":{}},"count":true}`, 200, `"count":2`},
		{"root-token", "POST", "/api/orm/invoice/search", `{"domain":[["state","!=","draft"]],"order":"number desc","limit":2}`, 200, `"ids":[5,3]`},
		{"bob-token", "POST", "/api/orm/invoice/read", `{"ids":[1],"spec":{"partner":{"name":{}},"lines":{"product":{}}}}`, 200, `"partner":{"id":1,"name":"Acme"}`},
		{"root-token", "POST", "/api/orm/invoice/read_group", `{"groupBy":["date:month"],"aggregates":{"total":"sum:total"}}`, 200, `{"count":2,"date:month":"2026-01","total":350.5}`},
		{"bob-token", "POST", "/api/orm/invoice/create", `{"values":{"number":"N-1","partner":1,"lines":[{"op":"create","values":{"product":"p"}}]}}`, 201, `"id":6`},
		{"bob-token", "POST", "/api/orm/invoice/write", `{"ids":[6],"values":{"total":5}}`, 200, `"ok":true`},
		{"root-token", "POST", "/api/orm/invoice/unlink", `{"ids":[6]}`, 200, `"ok":true`},
		{"bob-token", "POST", "/api/orm/invoice/onchange", `{"field":"total","values":{}}`, 200, `"values":{}`},
		// Errors name what is wrong.
		{"bob-token", "POST", "/api/orm/nope/search", `{}`, 400, `"message":"model nope: no such model"`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"domain":[["nope","=",1]]}`, 400, `model invoice term [\"nope\",\"=\",1]: no field nope`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"domain":["|"]}`, 400, `operator | needs more`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"domain":{}}`, 400, `model invoice: domain must be a list`},
		{"bob-token", "POST", "/api/orm/invoice/create", `{"values":{"partner":1}}`, 400, `model invoice field number: is required`},
		{"bob-token", "POST", "/api/orm/invoice/create", `{"values":{"number":"x","total":"ten"}}`, 400, `model invoice field total: want a number`},
		{"bob-token", "POST", "/api/orm/invoice/create", `{"values":{"number":"x","partner":99}}`, 400, `model invoice field partner: contact record 99 does not exist`},
		{"root-token", "POST", "/api/orm/contact/unlink", `{"ids":[1]}`, 409, `model invoice field partner: records 1, 3 refer`},
		{"bob-token", "POST", "/api/orm/invoice/unlink", `{"ids":[1]}`, 403, `unlink refused: user 2 may not delete`},
		{"bob-token", "POST", "/api/orm/invoice/read", `{"ids":[2]}`, 404, `no record 2 that this user may read`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"sudo":true}`, 400, `unknown key \"sudo\"`},
		{"", "POST", "/api/orm/invoice/search", `{}`, 401, `"kind":"auth"`},
		{"bob-token", "POST", "/api/orm/invoice/search", `{"count":"yes"}`, 400, `model invoice: count must be true or false, got a string`},
		{"bob-token", "POST", "/api/orm/invoice/onchange", `{"values":{}}`, 400, `model invoice: field must be the name of the field that changed`},
		{"bob-token", "POST", "/api/orm/invoice/read", `{"ids":"1"}`, 400, `ids must be a list of record ids`},
		{"bob-token", "POST", "/api/orm/invoice/read_group", `{"groupBy":"state"}`, 400, `groupBy must be a list`},
		{"bob-token", "POST", "/api/orm/invoice/search", `[1]`, 400, `the body must be a JSON object`},
	} {
		status, body := e.call(t, restCall{c.token, c.method, c.path, c.body})
		raw, _ := json.Marshal(body)
		if status != c.status || !strings.Contains(string(raw), c.want) {
			t.Errorf("%s %s %s as %q = %d %s; want %d with %s", c.method, c.path, c.body, c.token, status, raw, c.status, c.want)
		}
	}
}
