package storetest

import (
	"reflect"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// testColumnTypes creates a table from the dialect's column types, inserts
// through placeholders and checks the Go type and value of every column read
// back: the same in every dialect. Seen failing with BOOLEAN read back as
// int64 (SQLite) and int2 not widened (Postgres).
func testColumnTypes(t *testing.T, db contracts.Database) {
	ct, err := db.Dialect().Types()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE c_things (
		"id" `+ct.ID+`, "n" `+ct.BigInt+`, "f" `+ct.Double+`, "ok" `+ct.Boolean+`,
		"s" `+ct.Text+`, "b" `+ct.Blob+`, "none" `+ct.Text+`)`)
	insert := `INSERT INTO c_things ("n", "f", "ok", "s", "b", "none") VALUES (?, ?, ?, ?, ?, ?) RETURNING "id"`
	first := mustQuery(t, db, insert, int64(1)<<40, 1.5, true, "héllo ? 'x'", []byte{0, 1, 255}, nil)
	second := mustQuery(t, db, insert, int64(-7), -0.25, false, "", []byte{}, nil)
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("INSERT ... RETURNING gave %d and %d rows, want 1 each", len(first), len(second))
	}
	id1, ok1 := first[0]["id"].(int64)
	id2, ok2 := second[0]["id"].(int64)
	if !ok1 || !ok2 || id2 <= id1 {
		t.Fatalf("generated ids = %#v, %#v; want increasing int64s", first[0]["id"], second[0]["id"])
	}
	cases := []struct {
		id   int64
		want contracts.Row
	}{
		{id1, contracts.Row{"id": id1, "n": int64(1) << 40, "f": 1.5, "ok": true, "s": "héllo ? 'x'", "b": []byte{0, 1, 255}, "none": nil}},
		{id2, contracts.Row{"id": id2, "n": int64(-7), "f": -0.25, "ok": false, "s": "", "b": []byte{}, "none": nil}},
	}
	for _, tc := range cases {
		rows := mustQuery(t, db, `SELECT "id", "n", "f", "ok", "s", "b", "none" FROM c_things WHERE "id" = ?`, tc.id)
		if len(rows) != 1 {
			t.Fatalf("row %d: got %d rows, want 1", tc.id, len(rows))
		}
		for col, want := range tc.want {
			got := rows[0][col]
			if b, ok := got.([]byte); ok && len(b) == 0 && want != nil {
				got = []byte{} // nil and empty are the same empty blob
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("row %d column %s = %#v (%T), want %#v (%T)", tc.id, col, got, got, want, want)
			}
		}
	}
	rows := mustQuery(t, db, `SELECT COUNT(*) AS n FROM c_things WHERE "ok" = ?`, true)
	if rows[0]["n"] != int64(1) {
		t.Fatalf("rows with ok = true: %v, want 1", rows[0]["n"])
	}
	// Narrow and exact numeric types widen to int64 and float64 too.
	rows = mustQuery(t, db, `SELECT CAST(7 AS SMALLINT) AS small, CAST(1.5 AS NUMERIC) AS exact, CAST(NULL AS NUMERIC) AS absent`)
	if want := (contracts.Row{"small": int64(7), "exact": 1.5, "absent": nil}); !reflect.DeepEqual(rows[0], want) {
		t.Fatalf("narrow types read as %s, want %s", typed(rows[0]), typed(want))
	}
}
