package orm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// RESTPath is where the REST API is served: GET RESTPath lists the
// models, GET RESTPath/{model}/spec answers a ModelSpec, and POST
// RESTPath/{model}/{search|read|create|write|unlink|read_group|onchange}
// take JSON bodies.
const RESTPath = "/api/orm"

// routes returns the REST API. Reads need the read scope and writes the
// admin scope; then every call acts for whom ContextOf says, never sudo.
// The routes are Admin ones (with an admin listener they answer only
// there) unless Options.UserREST, which serves them to users everywhere.
func (s *service) routes() []smshttp.Route {
	read, write := smshttp.ScopeRead, smshttp.ScopeAdmin
	admin, users := !s.userREST, s.userREST
	post := func(action string, scope smshttp.Scope, h func(context.Context, string, map[string]any) (*smshttp.Response, error)) smshttp.Route {
		return smshttp.Route{Method: http.MethodPost, Path: RESTPath + "/:model/" + action, Scope: scope, Handler: s.rest(h), Admin: admin, Users: users}
	}
	return []smshttp.Route{
		{Method: http.MethodGet, Path: RESTPath, Scope: read, Admin: admin, Users: users, Handler: func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return smshttp.JSON(map[string]any{"models": s.Models()}), nil
		}},
		{Method: http.MethodGet, Path: RESTPath + "/:model/spec", Scope: read, Admin: admin, Users: users, Handler: func(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
			spec, err := s.Spec(r.Params["model"])
			if err != nil {
				return nil, restErr(err)
			}
			return smshttp.JSON(spec), nil
		}},
		post("search", read, s.restSearch),
		post("read", read, s.restRead),
		post("read_group", read, s.restReadGroup),
		post("onchange", read, s.restOnchange),
		post("create", write, s.restCreate),
		post("write", write, s.restWrite),
		post("unlink", write, s.restUnlink),
	}
}

// rest adapts a handler of a JSON object body, acting for the caller.
// The body is read as JSON whatever its content type, as the admin API's.
func (s *service) rest(h func(context.Context, string, map[string]any) (*smshttp.Response, error)) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		raw := r.Body
		if text, isText := raw.(string); isText { // curl -d sends a form content type
			if err := json.Unmarshal([]byte(text), &raw); err != nil {
				return nil, smshttp.NewError(smshttp.KindValidation, "the body is not valid JSON: "+err.Error())
			}
		}
		body, ok := raw.(map[string]any)
		if raw == nil {
			body, ok = map[string]any{}, true
		}
		if !ok {
			return nil, smshttp.NewError(smshttp.KindValidation, "the body must be a JSON object")
		}
		op := s.contextOf(ctx)
		op.Sudo = false
		model := r.Params["model"]
		resp, err := h(WithOp(ctx, op), model, body)
		if err != nil {
			return nil, restErr(inModel(err, model))
		}
		return resp, nil
	}
}

func (s *service) restSearch(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the search body", "domain", "limit", "offset", "order", "spec", "count")
	if err != nil {
		return nil, err
	}
	d, err := decodeDomain(b["domain"])
	if err != nil {
		return nil, err
	}
	opts, err := decodeOptions(map[string]any{"limit": b["limit"], "offset": b["offset"], "order": b["order"]})
	if err != nil {
		return nil, err
	}
	ids, err := s.Search(ctx, model, d, opts)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"ids": ids}
	if b["spec"] != nil {
		spec, err := decodeSpec(b["spec"])
		if err != nil {
			return nil, err
		}
		recs, release, err := s.read(ctx, model, ids, spec)
		defer release()
		if err != nil {
			return nil, err
		}
		out["records"] = recs
	}
	count, ok := b["count"].(bool)
	if !ok && b["count"] != nil {
		return nil, argErr("count must be true or false, got %s", kindOf(b["count"]))
	}
	if count {
		if out["count"], err = s.Count(ctx, model, d); err != nil {
			return nil, err
		}
	}
	return encoded(out)
}

func (s *service) restRead(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the read body", "ids", "spec")
	if err != nil {
		return nil, err
	}
	ids, err := decodeIDs(b["ids"])
	if err != nil {
		return nil, err
	}
	spec, err := decodeSpec(b["spec"])
	if err != nil {
		return nil, err
	}
	recs, release, err := s.read(ctx, model, ids, spec)
	defer release()
	if err != nil {
		return nil, err
	}
	return encoded(map[string]any{"records": recs})
}

// encoded is a 200 answering v encoded now, while the read that built v
// still holds its share of the read budget.
func encoded(v any) (*smshttp.Response, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the answer: %w", err)
	}
	return smshttp.JSON(json.RawMessage(raw)), nil
}

func (s *service) restReadGroup(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	g, err := decodeGroup(body)
	if err != nil {
		return nil, err
	}
	groups, err := s.ReadGroup(ctx, model, g)
	if err != nil {
		return nil, err
	}
	return smshttp.JSON(map[string]any{"groups": groups}), nil
}

func (s *service) restOnchange(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the onchange body", "field", "values")
	if err != nil {
		return nil, err
	}
	field, ok := b["field"].(string)
	if !ok {
		return nil, argErr("field must be the name of the field that changed, got %s", kindOf(b["field"]))
	}
	values, err := decodeValues(b["values"])
	if err != nil {
		return nil, err
	}
	changes, err := s.Onchange(ctx, model, field, values)
	if err != nil {
		return nil, err
	}
	return smshttp.JSON(map[string]any{"values": changes}), nil
}

func (s *service) restCreate(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the create body", "values")
	if err != nil {
		return nil, err
	}
	values, err := decodeValues(b["values"])
	if err != nil {
		return nil, err
	}
	id, err := s.Create(ctx, model, values)
	if err != nil {
		return nil, err
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: map[string]any{"id": id}}, nil
}

func (s *service) restWrite(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the write body", "ids", "values")
	if err != nil {
		return nil, err
	}
	ids, err := decodeIDs(b["ids"])
	if err != nil {
		return nil, err
	}
	values, err := decodeValues(b["values"])
	if err != nil {
		return nil, err
	}
	if err := s.Write(ctx, model, ids, values); err != nil {
		return nil, err
	}
	return smshttp.JSON(map[string]any{"ok": true}), nil
}

func (s *service) restUnlink(ctx context.Context, model string, body map[string]any) (*smshttp.Response, error) {
	b, err := object(body, "the unlink body", "ids")
	if err != nil {
		return nil, err
	}
	ids, err := decodeIDs(b["ids"])
	if err != nil {
		return nil, err
	}
	if err := s.Unlink(ctx, model, ids); err != nil {
		return nil, err
	}
	return smshttp.JSON(map[string]any{"ok": true}), nil
}

// restErr gives the ORM's errors their HTTP kinds: 400 validation (and a
// hook's rejection), 403 forbidden, 404 not found, 409 conflict, 429
// too_many (the read budget is spent for now).
func restErr(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return smshttp.NewError(smshttp.KindNotFound, err.Error())
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrRejected):
		return smshttp.NewError(smshttp.KindValidation, err.Error())
	case errors.Is(err, ErrForbidden):
		return smshttp.NewError(smshttp.KindForbidden, err.Error())
	case errors.Is(err, ErrConflict):
		return smshttp.NewError(smshttp.KindConflict, err.Error())
	case errors.Is(err, ErrBusy):
		return smshttp.NewError(smshttp.KindTooMany, err.Error())
	}
	return err
}
