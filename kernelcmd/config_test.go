package kernelcmd

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// full sets every field of Config to something other than its default, so
// that every flag appears in its Args.
var full = Config{
	Listen:                   "0.0.0.0:9000",
	Store:                    "postgres://sms:secret@db:5432/sms",
	Schema:                   "tenant_a",
	Name:                     "tenant-a",
	Tenant:                   "acme/tenant-a",
	TokenFile:                "/var/run/sms/token",
	TokenAuthFile:            "/var/run/sms/tokens.csv",
	AdminListen:              "0.0.0.0:9001",
	MaxConnections:           64,
	MaxConnectionsPerAddress: 8,
	Executor:                 "goja",
	SandboxIdle:              30 * time.Second,
	Model: Model{Provider: "openaicompat", Name: "llama3", BaseURL: "http://ollama:11434/v1", Script: "/etc/sms/turns.json", KeyFile: "/var/run/sms/model-key",
		Effort: "high", ThinkingBudget: 4096, AppName: "Acme books", SiteURL: "https://books.acme.example", AllowUnofficial: true},
	Agent:                  Agent{Identity: "You keep the books of Acme, a small shop.", MaxSteps: 12},
	Users:                  true,
	BootstrapAdminFile:     "/var/run/sms/bootstrap-admin",
	NoSessionApprove:       true,
	SecureCookie:           true,
	AutoApprove:            true,
	SafeMode:               true,
	AgentCapabilities:      []string{"db.read", "http.route"},
	QuarantineAfter:        5,
	Approvers:              2,
	ApproverGroups:         []string{"leads", "security"},
	Budget:                 `{"currency":"EUR","limits":{"user":{"rows":100}}}`,
	SensitivePoints:        []string{"http.route", "tool"},
	SensitiveScopes:        []string{"net"},
	SystemPlugins:          []string{"audit", "rpc"},
	Objects:                "fs:/var/lib/sms/objects",
	ObjectsCredentialsFile: "/var/run/sms/objects/credentials",
}

// parseArgs parses args (as Args returns them, starting with "kernel") with
// the flags BindFlags registers.
func parseArgs(t *testing.T, args []string) (Config, *pflag.FlagSet) {
	t.Helper()
	if len(args) == 0 || args[0] != "kernel" {
		t.Fatalf("Args() = %q, want it to start with kernel", args)
	}
	var got Config
	fs := pflag.NewFlagSet("kernel", pflag.ContinueOnError)
	BindFlags(fs, &got)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	if fs.NArg() != 0 {
		t.Fatalf("parse %q left arguments %q", args, fs.Args())
	}
	return got, fs
}

// Args writes flags that BindFlags accepts and parses back to the same
// Config: the operator's StatefulSet arguments configure the kernel it
// meant. A zero field means its default on both sides, and an empty (not
// nil) sensitive list survives, since it means "nothing is sensitive".
// Seen failing with "model-name" misspelled "model-nam" in Args (parse:
// unknown flag: --model-nam), and with the --schema line removed from Args
// (got Schema "", want "tenant_a").
func TestArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out Config
	}{
		{"every field", full, full},
		{"defaults", Defaults, Defaults},
		{"zero means defaults", Config{}, Defaults},
		{"nothing sensitive", Config{SensitivePoints: []string{}, SensitiveScopes: []string{}},
			withLists(Defaults, []string{}, []string{})},
		{"one field", Config{Executor: "goja"}, withExecutor(Defaults, "goja")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := parseArgs(t, tc.in.Args())
			if !reflect.DeepEqual(got, tc.out) {
				t.Errorf("parse(%q)\n got %#v\nwant %#v", tc.in.Args(), got, tc.out)
			}
		})
	}
}

// Every flag BindFlags registers is written by Args for a Config with every
// field set, and full does set every field: a field added to Config but
// not to Args or BindFlags (or to full) fails here.
// Seen failing with the --auto-approve line removed from Args.
func TestArgsWritesEveryFlag(t *testing.T) {
	assertNoZeroField(t, reflect.ValueOf(full), "full")
	_, fs := parseArgs(t, full.Args())
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			t.Errorf("Args() = %q sets no --%s", full.Args(), f.Name)
		}
	})
	if n := len(full.Args()) - 1; n != fs.NFlag() {
		t.Errorf("Args() wrote %d flags for %d distinct ones: %q", n, fs.NFlag(), full.Args())
	}
}

func assertNoZeroField(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			assertNoZeroField(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
		return
	}
	if v.IsZero() {
		t.Errorf("%s is not set", path)
	}
}

func withLists(c Config, points, scopes []string) Config {
	c.SensitivePoints, c.SensitiveScopes = points, scopes
	return c
}

func withExecutor(c Config, executor string) Config {
	c.Executor = executor
	return c
}
