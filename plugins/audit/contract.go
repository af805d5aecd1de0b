package audit

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/plugins/orm"
)

// PluginID is the id of the audit system plugin.
const PluginID = "sms.audit"

// Key is the key whose value is the Service; system only.
const Key = "audit"

// TrackPoint takes a Track; open to agent plugins.
const TrackPoint = "audit-track"

// The models the plugin declares.
const (
	MessageModel  = "audit_message"
	ActivityModel = "audit_activity"
	FollowerModel = "audit_follower"
)

// RoutePrefix is where the routes are served.
const RoutePrefix = "/api/audit"

// Message kinds.
const (
	KindNote     = "note"
	KindComment  = "comment"
	KindTracking = "tracking"
)

// Bounds.
const (
	// MaxBodyLen is the longest message body, in bytes.
	MaxBodyLen = 16 << 10
	// MaxFollowers is the most followers one record may have.
	MaxFollowers = 100
	// MaxTrackFields is the most fields one Track may list.
	MaxTrackFields = 64
	// MaxPage is the most messages or activities one read answers.
	MaxPage = 200
	// MaxSummaryLen is the longest activity summary.
	MaxSummaryLen = 200
	// MaxTrackedValue is the longest value a tracking message shows, in
	// bytes; longer ones are cut.
	MaxTrackedValue = 200
)

// Message is what Post posts.
type Message struct {
	Body string `json:"body"`
	// Kind is KindNote (the default) or KindComment; KindTracking is the
	// plugin's own.
	Kind string `json:"kind,omitempty"`
}

// Track is an item of TrackPoint: the fields of Model whose changes post
// a tracking message.
type Track struct {
	Model  string   `json:"model"`
	Fields []string `json:"fields"`
}

// Activity is something to do about a record, assigned to a user.
type Activity struct {
	Summary string `json:"summary"`
	Note    string `json:"note,omitempty"`
	// Due is a date, YYYY-MM-DD.
	Due    string `json:"due,omitempty"`
	UserID int64  `json:"userId"`
}

// Thread is a record's messages (newest first), followers and open
// activities.
type Thread struct {
	Messages   []orm.Record `json:"messages"`
	Followers  []int64      `json:"followers"`
	Activities []orm.Record `json:"activities"`
}

// Service is the value of Key. Every method acts for the caller ctx
// serves: it fails with ErrNotFound unless that caller may read the record.
type Service interface {
	// Post posts a message on a record and returns its id.
	Post(ctx context.Context, model string, id int64, m Message) (int64, error)
	// Thread reads a record's thread: its MaxPage newest messages older
	// than the message before (the newest when before is 0), its followers
	// and its open activities.
	Thread(ctx context.Context, model string, id, before int64) (Thread, error)
	// Follow and Unfollow add and remove a follower of a record.
	Follow(ctx context.Context, model string, id, userID int64) error
	Unfollow(ctx context.Context, model string, id, userID int64) error
	// Schedule adds an activity to a record.
	Schedule(ctx context.Context, model string, id int64, a Activity) (int64, error)
}

// Options configure the plugin.
type Options struct {
	// Group, when set, is an rbac group the plugin grants read of its own
	// activities through the ORM's routes (the "own activities" rule). It
	// needs the rbac plugin. Messages and followers are never open there:
	// the thread route serves them to whoever may read the record.
	Group string
	// Users serves the routes to every user's session, as
	// orm.Options.UserREST does for the ORM's; set them alike.
	Users bool
}

// Errors the Service wraps.
var (
	ErrInvalid  = errors.New("invalid")
	ErrNotFound = errors.New("not found")
	ErrTooMany  = errors.New("too many")
)
