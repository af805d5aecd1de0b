package contracts_test

import (
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// Seen failing with the Postgres ID type lacking PRIMARY KEY.
func TestDialectTypes(t *testing.T) {
	for _, d := range []contracts.Dialect{contracts.DialectSQLite, contracts.DialectPostgres} {
		ct, err := d.Types()
		if err != nil || !d.Valid() {
			t.Fatalf("%s: Types() error = %v, Valid() = %v; want a known dialect", d, err, d.Valid())
		}
		for name, typ := range map[string]string{"ID": ct.ID, "BigInt": ct.BigInt, "Double": ct.Double,
			"Boolean": ct.Boolean, "Text": ct.Text, "Blob": ct.Blob} {
			if typ == "" {
				t.Errorf("%s: %s type is empty", d, name)
			}
		}
		if !strings.Contains(ct.ID, "PRIMARY KEY") {
			t.Errorf("%s: ID = %q, want an auto-incrementing primary key", d, ct.ID)
		}
	}
	if _, err := contracts.Dialect("mysql").Types(); err == nil {
		t.Fatal("Types() of an unknown dialect: error = nil, want one")
	}
}
