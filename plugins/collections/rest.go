package collections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// restPath is where the REST API is served; records live under restPath/:name.
const restPath = "/api/collections"

// routes returns the REST API over s.
func (s *service) routes() []smshttp.Route {
	read, write := smshttp.ScopeRead, smshttp.ScopeAdmin
	return []smshttp.Route{
		{Method: http.MethodGet, Path: restPath, Handler: s.restDefinitions, Scope: read},
		{Method: http.MethodGet, Path: restPath + "/:name", Handler: s.restList, Scope: read, Public: s.public, Users: true},
		{Method: http.MethodPost, Path: restPath + "/:name", Handler: s.restCreate, Scope: write, Public: s.public, Users: true},
		{Method: http.MethodGet, Path: restPath + "/:name/:id", Handler: s.restGet, Scope: read, Public: s.public, Users: true},
		{Method: http.MethodPatch, Path: restPath + "/:name/:id", Handler: s.restUpdate, Scope: write, Public: s.public, Users: true},
		{Method: http.MethodDelete, Path: restPath + "/:name/:id", Handler: s.restDelete, Scope: write, Public: s.public, Users: true},
	}
}

// public reports whether the request is for a collection declared public:
// then it needs no credential. Reads need the read scope otherwise, and
// writes the admin scope, or a user's session (Users), and then the guard
// decides.
func (s *service) public(r *smshttp.Request) bool {
	c, ok := s.reg.definition(r.Params["name"])
	return ok && c.Public
}

func (s *service) restDefinitions(context.Context, *smshttp.Request) (*smshttp.Response, error) {
	return smshttp.JSON(map[string]any{"collections": s.Definitions()}), nil
}

func (s *service) restList(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := s.restAllow(ctx, r, "read"); err != nil {
		return nil, err
	}
	opts, err := queryOptions(r.Query)
	if err != nil {
		return nil, err
	}
	recs, err := s.List(ctx, r.Params["name"], opts)
	if err != nil {
		return nil, restErr(err)
	}
	return smshttp.JSON(map[string]any{"records": recs}), nil
}

func (s *service) restCreate(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := s.restAllow(ctx, r, "create"); err != nil {
		return nil, err
	}
	values, err := bodyObject(r)
	if err != nil {
		return nil, err
	}
	rec, err := s.Create(ctx, r.Params["name"], values)
	if err != nil {
		return nil, restErr(err)
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: rec}, nil
}

func (s *service) restGet(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := s.restAllow(ctx, r, "read"); err != nil {
		return nil, err
	}
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	rec, err := s.Get(ctx, r.Params["name"], id)
	if err != nil {
		return nil, restErr(err)
	}
	return smshttp.JSON(rec), nil
}

func (s *service) restUpdate(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := s.restAllow(ctx, r, "write"); err != nil {
		return nil, err
	}
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	values, err := bodyObject(r)
	if err != nil {
		return nil, err
	}
	rec, err := s.Update(ctx, r.Params["name"], id, values)
	if err != nil {
		return nil, restErr(err)
	}
	return smshttp.JSON(rec), nil
}

func (s *service) restDelete(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := s.restAllow(ctx, r, "unlink"); err != nil {
		return nil, err
	}
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := s.Delete(ctx, r.Params["name"], id); err != nil {
		return nil, restErr(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

// restAllow asks the guard about a REST request, unless it is for a
// public collection.
func (s *service) restAllow(ctx context.Context, r *smshttp.Request, action string) error {
	if s.public(r) {
		return nil
	}
	return restErr(s.allow(ctx, r.Params["name"], action))
}

// restErr gives errors the caller can act on their HTTP kind; anything
// else stays internal (the http plugin logs it and names this plugin).
func restErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return smshttp.NewError(smshttp.KindNotFound, err.Error())
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrRejected):
		return smshttp.NewError(smshttp.KindValidation, err.Error())
	case errors.Is(err, ErrForbidden):
		return smshttp.NewError(smshttp.KindForbidden, err.Error())
	}
	return err
}

// queryOptions reads ?where={json object}&limit=n&offset=n.
func queryOptions(q map[string]string) (ListOptions, error) {
	var opts ListOptions
	if w, ok := q["where"]; ok {
		if err := json.Unmarshal([]byte(w), &opts.Where); err != nil || opts.Where == nil {
			return opts, smshttp.NewError(smshttp.KindValidation,
				`where must be a JSON object of field values, such as where={"paid":false}`)

		}
	}
	for _, p := range []struct {
		name string
		dst  *int
		min  int
	}{{"limit", &opts.Limit, 1}, {"offset", &opts.Offset, 0}} {
		v, ok := q[p.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min {
			return opts, smshttp.NewError(smshttp.KindValidation,
				fmt.Sprintf("%s must be a whole number from %d, got %q", p.name, p.min, v))

		}
		*p.dst = n
	}
	return opts, nil
}

func pathID(r *smshttp.Request) (int64, error) {
	raw := r.Params["id"]
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return 0, smshttp.NewError(smshttp.KindValidation, fmt.Sprintf("record id %q must be a whole number from 1", raw))
	}
	return id, nil
}

func bodyObject(r *smshttp.Request) (map[string]any, error) {
	m, ok := r.Body.(map[string]any)
	if !ok {
		return nil, smshttp.NewError(smshttp.KindValidation, "the body must be a JSON object of field values")
	}
	return m, nil
}
