package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sms-baseline/sms/contracts/storetest"
)

// A connection whose search_path is not the pin is refused, as one behind a
// pooler that drops startup parameters would be. Seen failing with
// checkSearchPath returning nil.
func TestCheckSearchPathRefusesOtherPaths(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `SET search_path = public`); err != nil {
		t.Fatal(err)
	}
	err = checkSearchPath(ctx, conn, `"tenant_a"`)
	if err == nil || !strings.Contains(err.Error(), "search_path is public") {
		t.Fatalf("checkSearchPath on a connection searching public: error = %v, want a refusal naming it", err)
	}
	if err := checkSearchPath(ctx, conn, "public"); err != nil {
		t.Fatalf("checkSearchPath with the matching pin: %v, want nil", err)
	}
}
