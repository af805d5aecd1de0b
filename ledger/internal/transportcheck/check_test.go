package transportcheck

import (
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"LoadRun", []string{"load", "run"}},
		{"NotifyURLNow", []string{"notify", "url", "now"}},
		{"HTTPPost", []string{"http", "post"}},
		{"send_mail", []string{"send", "mail"}},
		{"x", []string{"x"}},
	}
	for _, tc := range tests {
		if got := words(tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("words(%q): got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestImpliesOutbound(t *testing.T) {
	tests := map[string]bool{
		"InsertRun": false, "LoadRun": false, "UpdateRun": false, "LoadSteps": false, "RecordStep": false,
		"NextStep": false, "ClaimRun": false, "Recall": false, "Calendar": false,
		"Send": true, "SendEmail": true, "Notify": true, "PostResult": true, "Publish": true,
		"Dispatch": true, "EmitEvent": true, "FetchURL": true, "PushUpdate": true, "Deliver": true,
		"ExecuteStep": true, "Perform": true, "CallHost": true, "SaveWebhook": true, "Mailer": true, "HTTPPost": true,
	}
	for name, want := range tests {
		if got := impliesOutbound(name); got != want {
			t.Errorf("impliesOutbound(%q): got %v, want %v", name, got, want)
		}
	}
}

func TestContainsFunc(t *testing.T) {
	fn := types.NewSignatureType(nil, nil, nil, nil, nil, false)
	i := types.Typ[types.Int]
	tests := []struct {
		name string
		typ  types.Type
		want bool
	}{
		{"int", i, false},
		{"func", fn, true},
		{"pointer to func", types.NewPointer(fn), true},
		{"array of func", types.NewArray(fn, 2), true},
		{"chan of func", types.NewChan(types.SendRecv, fn), true},
		{"map to func", types.NewMap(i, fn), true},
		{"map of ints", types.NewMap(i, i), false},
		{"struct with func", types.NewStruct([]*types.Var{types.NewField(token.NoPos, nil, "F", fn, false)}, nil), true},
	}
	for _, tc := range tests {
		if got := containsFunc(tc.typ, map[types.Type]bool{}); got != tc.want {
			t.Errorf("containsFunc(%s): got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	broken := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(broken, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/broken\n\ngo 1.26\n")
	write("a.go", "package broken\n")
	write("b.go", "//go:build never\n\npackage broken\n\nfunc {\n")
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), broken} {
		if _, err := Check(dir); err == nil {
			t.Errorf("Check(%s): got nil error, want one", dir)
		}
	}
}
