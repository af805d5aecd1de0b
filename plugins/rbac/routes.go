package rbac

import (
	"context"
	"errors"
	"net/http"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Routes under /api/auth/groups, for an admin session or an admin
// credential, on the admin listener; part of the admin API's wire
// contract.
const (
	RouteGroups = adminv1.RouteGroups
	RouteGroup  = adminv1.RouteGroup
)

type routes struct {
	s     *service
	users auth.Admin
}

func (rt *routes) list() []smshttp.Route {
	r := func(method, path string, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: method, Path: path, Handler: auth.Versioned(h), Scope: smshttp.ScopeAdmin, Admin: true}
	}
	return []smshttp.Route{
		r(http.MethodGet, RouteGroups, rt.getGroups),
		r(http.MethodPost, RouteGroups, rt.postGroup),
		r(http.MethodDelete, RouteGroup, rt.deleteGroup),
		r(http.MethodPost, adminv1.RouteGroupMembers, rt.postMember),
		r(http.MethodDelete, adminv1.RouteGroupMember, rt.deleteMember),
		r(http.MethodPut, adminv1.RouteModelAccess, rt.putAccess("model")),
		r(http.MethodDelete, adminv1.RouteModelAccess, rt.deleteAccess("model")),
		r(http.MethodPut, adminv1.RouteCollAccess, rt.putAccess("collection")),
		r(http.MethodDelete, adminv1.RouteCollAccess, rt.deleteAccess("collection")),
	}
}

// httpError gives the errors of this package and of auth their kinds.
func httpError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalid), errors.Is(err, auth.ErrInvalid):
		return smshttp.NewError(smshttp.KindValidation, err.Error())
	case errors.Is(err, ErrNotFound), errors.Is(err, auth.ErrNotFound):
		return smshttp.NewError(smshttp.KindNotFound, err.Error())
	case errors.Is(err, ErrConflict):
		return smshttp.NewError(smshttp.KindConflict, err.Error())
	case errors.Is(err, ErrForbidden):
		return smshttp.NewError(smshttp.KindForbidden, err.Error())
	}
	return err
}

func (rt *routes) getGroups(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
	groups, err := rt.s.Groups(ctx)
	if err != nil {
		return nil, err
	}
	logins := map[int64]string{}
	users, err := rt.users.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		logins[u.ID] = u.Login
	}
	out := adminv1.Groups{Groups: make([]adminv1.Group, len(groups))}
	for i, g := range groups {
		w := adminv1.Group{Name: g.Name, Implies: g.Implies, Description: g.Description, Code: g.Code,
			Members: []string{}, Access: make([]adminv1.Access, len(g.Access))}
		for _, id := range g.Members {
			w.Members = append(w.Members, logins[id])
		}
		for j, a := range g.Access {
			w.Access[j] = adminv1.Access(a)
		}
		out.Groups[i] = w
	}
	return smshttp.JSON(out), nil
}

func (rt *routes) postGroup(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	var g Group
	if err := smshttp.DecodeBody(r, &g, `{"name":"...","implies":["..."],"description":"..."}`); err != nil {
		return nil, err
	}
	if err := rt.s.CreateGroup(ctx, g); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: g}, nil
}

func (rt *routes) deleteGroup(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := rt.s.DeleteGroup(ctx, r.Params["group"]); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

func (rt *routes) userID(ctx context.Context, login string) (int64, error) {
	u, err := rt.users.Get(ctx, login)
	if err != nil {
		return 0, httpError(err)
	}
	return u.ID, nil
}

func (rt *routes) postMember(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	var b struct {
		Login string `json:"login"`
	}
	if err := smshttp.DecodeBody(r, &b, `{"login":"..."}`); err != nil {
		return nil, err
	}
	id, err := rt.userID(ctx, b.Login)
	if err != nil {
		return nil, err
	}
	if err := rt.s.AddMember(ctx, r.Params["group"], id); err != nil {
		return nil, httpError(err)
	}
	return smshttp.JSON(map[string]any{"group": r.Params["group"], "login": b.Login}), nil
}

func (rt *routes) deleteMember(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id, err := rt.userID(ctx, r.Params["login"])
	if err != nil {
		return nil, err
	}
	if err := rt.s.RemoveMember(ctx, r.Params["group"], id); err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusNoContent}, nil
}

// target is the access a route's path names.
func target(kind string, r *smshttp.Request) Access {
	a := Access{Group: r.Params["group"]}
	if kind == "collection" {
		a.Collection = r.Params["name"]
	} else {
		a.Model = r.Params["name"]
	}
	return a
}

func (rt *routes) putAccess(kind string) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		var b struct {
			Read, Create, Write, Unlink bool
		}
		if err := smshttp.DecodeBody(r, &b, `{"read":true,"create":false,"write":false,"unlink":false}`); err != nil {
			return nil, err
		}
		a := target(kind, r)
		a.Read, a.Create, a.Write, a.Unlink = b.Read, b.Create, b.Write, b.Unlink
		if err := rt.s.Grant(ctx, a); err != nil {
			return nil, httpError(err)
		}
		return smshttp.JSON(adminv1.Access(a)), nil
	}
}

func (rt *routes) deleteAccess(kind string) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		if err := rt.s.Revoke(ctx, target(kind, r)); err != nil {
			return nil, httpError(err)
		}
		return &smshttp.Response{Status: http.StatusNoContent}, nil
	}
}
