package audit

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Routes, under RoutePrefix.
const (
	RouteThread     = RoutePrefix + "/:model/:id"
	RouteMessages   = RouteThread + "/messages"
	RouteFollowers  = RouteThread + "/followers"
	RouteFollower   = RouteFollowers + "/:user"
	RouteActivities = RouteThread + "/activities"
	RouteMine       = RoutePrefix + "/activities"
	RouteDone       = RouteMine + "/:activity/done"
)

type routes struct {
	s     *service
	users bool
}

// list is the routes: reads need the read scope and changes the admin
// scope from a bearer credential; with Users, every user's session is
// admitted and the record's readability decides.
func (rt routes) list() []smshttp.Route {
	r := func(method, path string, scope smshttp.Scope, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: method, Path: path, Scope: scope, Handler: h, Admin: !rt.users, Users: rt.users}
	}
	read, write := smshttp.ScopeRead, smshttp.ScopeAdmin
	return []smshttp.Route{
		r(http.MethodGet, RouteThread, read, rt.thread),
		r(http.MethodPost, RouteMessages, write, rt.post),
		r(http.MethodPost, RouteFollowers, write, rt.follow),
		r(http.MethodDelete, RouteFollower, write, rt.unfollow),
		r(http.MethodPost, RouteActivities, write, rt.schedule),
		r(http.MethodGet, RouteMine, read, rt.mine),
		r(http.MethodPost, RouteDone, write, rt.done),
	}
}

// httpError gives the package's and the ORM's errors their kinds.
func httpError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalid), errors.Is(err, orm.ErrInvalid):
		return smshttp.NewError(smshttp.KindValidation, err.Error())
	case errors.Is(err, ErrNotFound), errors.Is(err, orm.ErrNotFound):
		return smshttp.NewError(smshttp.KindNotFound, err.Error())
	case errors.Is(err, ErrTooMany):
		return smshttp.NewError(smshttp.KindTooMany, err.Error())
	case errors.Is(err, orm.ErrForbidden):
		return smshttp.NewError(smshttp.KindForbidden, err.Error())
	}
	return err
}

func record(r *smshttp.Request) (string, int64, error) {
	id, err := strconv.ParseInt(r.Params["id"], 10, 64)
	if err != nil || id < 1 {
		return "", 0, smshttp.NewError(smshttp.KindValidation, "the record id must be a whole number from 1, got "+strconv.Quote(r.Params["id"]))
	}
	return r.Params["model"], id, nil
}

// asCaller is ctx acting for the request's caller, never sudo.
func asCaller(ctx context.Context) context.Context { return orm.WithoutOp(ctx) }

func (rt routes) thread(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	model, id, err := record(r)
	if err != nil {
		return nil, err
	}
	var before int64
	if b := r.Query["before"]; b != "" {
		if before, err = strconv.ParseInt(b, 10, 64); err != nil || before < 1 {
			return nil, smshttp.NewError(smshttp.KindValidation, "before must be a message id from 1, got "+strconv.Quote(b))
		}
	}
	t, err := rt.s.Thread(asCaller(ctx), model, id, before)
	if err != nil {
		return nil, httpError(err)
	}
	return smshttp.JSON(t), nil
}

func (rt routes) post(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	model, id, err := record(r)
	if err != nil {
		return nil, err
	}
	var m Message
	if err := smshttp.DecodeBody(r, &m, `{"body":"...","kind":"note|comment"}`); err != nil {
		return nil, err
	}
	mid, err := rt.s.Post(asCaller(ctx), model, id, m)
	if err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: map[string]any{"id": mid}}, nil
}

func (rt routes) follow(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	model, id, err := record(r)
	if err != nil {
		return nil, err
	}
	var b struct {
		UserID int64 `json:"userId"`
	}
	if err := smshttp.DecodeBody(r, &b, `{"userId":N}`); err != nil {
		return nil, err
	}
	if err := rt.s.Follow(asCaller(ctx), model, id, b.UserID); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

func (rt routes) unfollow(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	model, id, err := record(r)
	if err != nil {
		return nil, err
	}
	user, err := strconv.ParseInt(r.Params["user"], 10, 64)
	if err != nil {
		return nil, smshttp.NewError(smshttp.KindValidation, "the follower must be a user id, got "+strconv.Quote(r.Params["user"]))
	}
	if who := smshttp.PrincipalFrom(ctx); who.UserID != 0 && who.UserID != user && !who.Has(smshttp.ScopeAdmin) {
		return nil, smshttp.NewError(smshttp.KindForbidden, "a user may remove only themselves from a record's followers")
	}
	if err := rt.s.Unfollow(asCaller(ctx), model, id, user); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

func (rt routes) schedule(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	model, id, err := record(r)
	if err != nil {
		return nil, err
	}
	var a Activity
	if err := smshttp.DecodeBody(r, &a, `{"summary":"...","note":"...","due":"YYYY-MM-DD","userId":N}`); err != nil {
		return nil, err
	}
	aid, err := rt.s.Schedule(asCaller(ctx), model, id, a)
	if err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: map[string]any{"id": aid}}, nil
}

// mine lists the caller's open activities.
func (rt routes) mine(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
	uid := smshttp.PrincipalFrom(ctx).UserID
	if uid == 0 {
		return smshttp.JSON(map[string]any{"activities": []orm.Record{}}), nil
	}
	sudo := orm.Sudo(asCaller(ctx))
	ids, err := rt.s.orm.Search(sudo, ActivityModel, orm.Domain{[]any{"user_id", "=", uid}, []any{"done", "=", false}}, orm.SearchOptions{Limit: MaxPage})
	if err != nil {
		return nil, httpError(err)
	}
	recs, err := rt.s.orm.Read(sudo, ActivityModel, ids, orm.ReadSpec{"res_model": nil, "res_id": nil, "summary": nil, "note": nil, "due": nil})
	if err != nil {
		return nil, httpError(err)
	}
	return smshttp.JSON(map[string]any{"activities": recs}), nil
}

// done marks one of the caller's activities done.
func (rt routes) done(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id, err := strconv.ParseInt(r.Params["activity"], 10, 64)
	uid := smshttp.PrincipalFrom(ctx).UserID
	if err != nil || id < 1 {
		return nil, smshttp.NewError(smshttp.KindValidation, "the activity id must be a whole number from 1")
	}
	sudo := orm.Sudo(asCaller(ctx))
	ids, err := rt.s.orm.Search(sudo, ActivityModel, orm.Domain{[]any{orm.FieldID, "=", id}, []any{"user_id", "=", uid}}, orm.SearchOptions{Limit: 1})
	if err != nil {
		return nil, httpError(err)
	}
	if len(ids) == 0 || uid == 0 {
		return nil, smshttp.NewError(smshttp.KindNotFound, "no activity "+strconv.FormatInt(id, 10)+" assigned to you")
	}
	if err := rt.s.orm.Write(sudo, ActivityModel, ids, map[string]any{"done": true}); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}
