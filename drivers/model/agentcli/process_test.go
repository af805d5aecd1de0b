package agentcli_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli"
)

// A CLI that exits while a helper it started still holds its output does
// not hold its turn: the helper is stopped with it. Seen failing (Run
// waited for the helper's 60 s) without the group kill after Wait.
func TestRunEndsWhenTheCLIExits(t *testing.T) {
	var lines []string
	start := time.Now()
	_, err := agentcli.Run(context.Background(), agentcli.Command{Path: "/bin/sh", Args: []string{"-c", "echo one; sleep 60 & exit 0"}},
		func(b []byte) error { lines = append(lines, string(b)); return nil })
	if err != nil || len(lines) != 1 || lines[0] != "one" {
		t.Fatalf("Run = %v, lines %q; want the line and no error", err, lines)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("Run took %s: it waited for the helper", took)
	}
}

// A CLI gets only the variables it needs, never the rest of the kernel's
// environment. Seen failing with Environ returning env whole.
func TestEnvironKeepsOnlyWhatACLINeeds(t *testing.T) {
	got := agentcli.Environ([]string{"PATH=/bin", "HOME=/home/k", "SMS_ADMIN_TOKEN=secret", "CLAUDE_CONFIG_DIR=/c", "AWS_SECRET=x"}, "CLAUDE_")
	want := []string{"PATH=/bin", "HOME=/home/k", "CLAUDE_CONFIG_DIR=/c"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Environ = %q, want %q", got, want)
	}
}

// A driver's CLI is refused with the setting at fault for an effort it
// does not take, and with how to install and log in when it is missing.
// Seen failing with Find skipping the effort check.
func TestFindNamesWhatToDo(t *testing.T) {
	c := agentcli.CLI{Driver: "x-cli", Command: "/nonexistent/x", Install: "npm install -g x", Login: "x login", Efforts: []string{"low"}}
	var se *contracts.SettingError
	if _, err := c.Find("/bin/sh", "huge"); !errors.As(err, &se) || se.Setting != contracts.ModelEffort {
		t.Fatalf("Find with effort huge = %v, want a setting error on the effort", err)
	}
	if _, err := c.Find("", "low"); err == nil || !strings.Contains(err.Error(), "npm install -g x` and run `x login") {
		t.Fatalf("Find of a missing CLI = %v, want how to install it and log in", err)
	}
	if path, err := c.Find("/bin/sh", "low"); err != nil || path != "/bin/sh" {
		t.Fatalf("Find(/bin/sh) = %q, %v", path, err)
	}
}
