package adminv1

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Routes of a kernel with users (its auth and rbac plugins). ":login",
// ":group" and ":name" stand for escaped path segments (PathOf).
const (
	RouteLogin          = "/api/auth/login"
	RouteLogout         = "/api/auth/logout"
	RouteMe             = "/api/auth/me"
	RouteUsers          = "/api/auth/users"
	RouteUser           = RouteUsers + "/:login"
	RouteUserPassword   = RouteUser + "/password"
	RouteUserAdmin      = RouteUser + "/admin"
	RouteUserDeactivate = RouteUser + "/deactivate"
	RouteUserActivate   = RouteUser + "/activate"
	RouteGroups         = "/api/auth/groups"
	RouteGroup          = RouteGroups + "/:group"
	RouteGroupMembers   = RouteGroup + "/members"
	RouteGroupMember    = RouteGroupMembers + "/:login"
	RouteModelAccess    = RouteGroup + "/access/models/:name"
	RouteCollAccess     = RouteGroup + "/access/collections/:name"
)

// CSRFHeader must be present (any value) on every login and on every
// state-changing request a session cookie authenticates.
const CSRFHeader = "X-Sms-Csrf"

// VersionHeaders name the admin API version of an answer: every route of
// this contract sets them.
func VersionHeaders() map[string]string { return map[string]string{VersionHeader: Version} }

// PathOf fills route's ":param" segments with values, in order, escaped.
func PathOf(route string, values ...string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") && len(values) > 0 {
			parts[i], values = url.PathEscape(values[0]), values[1:]
		}
	}
	return strings.Join(parts, "/")
}

// User is a user as every answer shows them: never a password or hash.
type User struct {
	ID        int64     `json:"id"`
	Login     string    `json:"login"`
	Admin     bool      `json:"admin"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewUser is the body of POST RouteUsers.
type NewUser struct {
	Login    string `json:"login"`
	Password string `json:"password"`
	Admin    bool   `json:"admin,omitempty"`
}

// Users is the answer of GET RouteUsers.
type Users struct {
	Users []User `json:"users"`
}

// Me is who the caller is: the answer of GET RouteMe and of a login.
type Me struct {
	Authenticated bool     `json:"authenticated"`
	Name          string   `json:"name,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	User          *User    `json:"user,omitempty"`
}

// Access is what a group may do to one model or collection.
type Access struct {
	Group      string `json:"group"`
	Model      string `json:"model,omitempty"`
	Collection string `json:"collection,omitempty"`
	Read       bool   `json:"read,omitempty"`
	Create     bool   `json:"create,omitempty"`
	Write      bool   `json:"write,omitempty"`
	Unlink     bool   `json:"unlink,omitempty"`
}

// Group is a group as GET RouteGroups answers it: Code for one a plugin
// contributed (or a built-in one), members by login.
type Group struct {
	Name        string   `json:"name"`
	Implies     []string `json:"implies,omitempty"`
	Description string   `json:"description,omitempty"`
	Code        bool     `json:"code"`
	Members     []string `json:"members"`
	Access      []Access `json:"access"`
}

// Groups is the answer of GET RouteGroups.
type Groups struct {
	Groups []Group `json:"groups"`
}

// Login signs in as login: from then on the client's requests carry the
// session (its http.Client needs a cookie jar) and CSRFHeader, and act
// with that user's rights. Use a client made without a token.
func (c *Client) Login(ctx context.Context, login, password string) (Me, error) {
	var me Me
	rq := call{method: http.MethodPost, path: RouteLogin, body: map[string]string{"login": login, "password": password},
		header: http.Header{CSRFHeader: {"1"}}}
	if err := c.do(ctx, rq, &me); err != nil {
		return Me{}, err
	}
	c.csrf.Store(true)
	return me, nil
}

// Users lists the users.
func (c *Client) Users(ctx context.Context) ([]User, error) {
	var us Users
	err := c.do(ctx, call{method: http.MethodGet, path: RouteUsers}, &us)
	return us.Users, err
}

// CreateUser creates a user.
func (c *Client) CreateUser(ctx context.Context, u NewUser) (User, error) {
	var out User
	err := c.do(ctx, call{method: http.MethodPost, path: RouteUsers, body: u}, &out)
	return out, err
}

// SetPassword sets a user's password, ending their sessions.
func (c *Client) SetPassword(ctx context.Context, login, password string) (User, error) {
	return c.userCall(ctx, PathOf(RouteUserPassword, login), map[string]string{"password": password})
}

// SetAdmin gives or takes a user's admin right.
func (c *Client) SetAdmin(ctx context.Context, login string, admin bool) (User, error) {
	return c.userCall(ctx, PathOf(RouteUserAdmin, login), map[string]bool{"admin": admin})
}

// Deactivate stops a user, ending their sessions; Activate lets them in again.
func (c *Client) Deactivate(ctx context.Context, login string) (User, error) {
	return c.userCall(ctx, PathOf(RouteUserDeactivate, login), map[string]any{})
}

// Activate lets a deactivated user log in again.
func (c *Client) Activate(ctx context.Context, login string) (User, error) {
	return c.userCall(ctx, PathOf(RouteUserActivate, login), map[string]any{})
}

func (c *Client) userCall(ctx context.Context, path string, body any) (User, error) {
	var u User
	err := c.do(ctx, call{method: http.MethodPost, path: path, body: body}, &u)
	return u, err
}

// Groups lists every group with its members and access.
func (c *Client) Groups(ctx context.Context) ([]Group, error) {
	var gs Groups
	err := c.do(ctx, call{method: http.MethodGet, path: RouteGroups}, &gs)
	return gs.Groups, err
}

// CreateGroup creates a group.
func (c *Client) CreateGroup(ctx context.Context, name string, implies []string, description string) error {
	body := map[string]any{"name": name, "implies": implies, "description": description}
	return c.do(ctx, call{method: http.MethodPost, path: RouteGroups, body: body}, nil)
}

// DeleteGroup deletes a group made over the API.
func (c *Client) DeleteGroup(ctx context.Context, name string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: PathOf(RouteGroup, name)}, nil)
}

// AddMember adds a user to a group; RemoveMember takes them out.
func (c *Client) AddMember(ctx context.Context, group, login string) error {
	return c.do(ctx, call{method: http.MethodPost, path: PathOf(RouteGroupMembers, group), body: map[string]string{"login": login}}, nil)
}

// RemoveMember takes a user out of a group.
func (c *Client) RemoveMember(ctx context.Context, group, login string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: PathOf(RouteGroupMember, group, login)}, nil)
}

// Grant sets a group's access to the model or collection a names.
func (c *Client) Grant(ctx context.Context, a Access) error {
	route, name := accessRoute(a)
	body := map[string]bool{"read": a.Read, "create": a.Create, "write": a.Write, "unlink": a.Unlink}
	return c.do(ctx, call{method: http.MethodPut, path: PathOf(route, a.Group, name), body: body}, nil)
}

// Revoke removes a group's access to the model or collection a names.
func (c *Client) Revoke(ctx context.Context, a Access) error {
	route, name := accessRoute(a)
	return c.do(ctx, call{method: http.MethodDelete, path: PathOf(route, a.Group, name)}, nil)
}

func accessRoute(a Access) (string, string) {
	if a.Collection != "" {
		return RouteCollAccess, a.Collection
	}
	return RouteModelAccess, a.Model
}
