package rbac

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/plugins/orm"
)

// PluginID is the id of the rbac system plugin.
const PluginID = "sms.rbac"

// Keys and points. The points are system-only: what a group may do is
// the application's code's to say, never an agent plugin's.
const (
	// Key's value is the Service: may this user do that, and on which
	// records. System only.
	Key = "rbac"
	// AdminKey's value is the Admin: groups, access and membership as
	// data. System only.
	AdminKey = "rbac-admin"
	// GroupPoint takes Group items.
	GroupPoint = "group"
	// AccessPoint takes Access items.
	AccessPoint = "access"
	// RulePoint takes Rule items.
	RulePoint = "rule"
)

// The built-in groups. Every signed-in user is in GroupUser; every admin
// user (and admin credential) in GroupAdmin, which implies GroupUser and
// may do everything to every model and collection (rules still apply).
const (
	GroupUser  = "user"
	GroupAdmin = "admin"
)

// All names every model (in Access.Model) or every collection (in
// Access.Collection).
const All = "*"

// UID in a rule's domain stands for the caller's user id.
const UID = "$uid"

// Errors the Service and the Admin wrap.
var (
	ErrInvalid   = errors.New("invalid")
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
	ErrForbidden = errors.New("forbidden")
)

// Group is a group of users. Implies lists groups its members are in too.
type Group struct {
	Name        string   `json:"name"`
	Implies     []string `json:"implies,omitempty"`
	Description string   `json:"description,omitempty"`
}

// Access grants a group operations on one model (or All of them), or on
// one collection (or All of them): exactly one of Model and Collection.
type Access struct {
	Group      string `json:"group"`
	Model      string `json:"model,omitempty"`
	Collection string `json:"collection,omitempty"`
	Read       bool   `json:"read,omitempty"`
	Create     bool   `json:"create,omitempty"`
	Write      bool   `json:"write,omitempty"`
	Unlink     bool   `json:"unlink,omitempty"`
}

// Rule narrows what users may reach of a model to the records its domain
// matches (UID standing for the user). A rule with no Groups is global:
// every global rule of a model applies to every user, and they are ANDed.
// Group rules apply to members of their groups, and those that apply are
// ORed together. Ops limits the rule to some operations (default all).
type Rule struct {
	Name   string       `json:"name"`
	Model  string       `json:"model"`
	Groups []string     `json:"groups,omitempty"`
	Domain orm.Domain   `json:"domain"`
	Ops    []orm.Action `json:"ops,omitempty"`
}

// Query is one question: may user do op on model.
type Query struct {
	UserID int64
	Admin  bool
	Model  string
	Op     orm.Action
}

// Service is the value of Key.
type Service interface {
	// AssertCan fails with ErrForbidden unless q's user may do q.Op on
	// q.Model at all. An anonymous query (no user, not admin) always fails.
	AssertCan(ctx context.Context, q Query) error
	// RuleDomain is the domain q's records are narrowed to (nil for all).
	RuleDomain(ctx context.Context, q Query) (orm.Domain, error)
	// AssertCanCollection is AssertCan for a collection.
	AssertCanCollection(ctx context.Context, q Query) error
	// GroupsOf lists the groups a user is in, implied ones included.
	GroupsOf(ctx context.Context, userID int64, admin bool) ([]string, error)
}

// GroupInfo is a group as the Admin lists it.
type GroupInfo struct {
	Group
	// Code is set for groups a plugin contributed (and the built-in
	// ones): only their members can change over the API.
	Code    bool     `json:"code"`
	Members []int64  `json:"members"`
	Access  []Access `json:"access"`
}

// Admin is the value of AdminKey.
type Admin interface {
	Groups(ctx context.Context) ([]GroupInfo, error)
	CreateGroup(ctx context.Context, g Group) error
	DeleteGroup(ctx context.Context, name string) error
	AddMember(ctx context.Context, group string, userID int64) error
	RemoveMember(ctx context.Context, group string, userID int64) error
	// Grant sets a group's access to one model or collection (replacing
	// what data granted before); Revoke removes it.
	Grant(ctx context.Context, a Access) error
	Revoke(ctx context.Context, a Access) error
}
