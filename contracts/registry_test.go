package contracts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// driver is a descriptor with nothing but its info.
type driver contracts.DriverInfo

func (d driver) Describe() contracts.DriverInfo { return contracts.DriverInfo(d) }

func newTestRegistry(t *testing.T) *contracts.Registry[driver] {
	t.Helper()
	r := contracts.NewRegistry[driver]("store")
	for _, d := range []driver{
		{Name: "sqlite", Help: "one file"},
		{Name: "postgres", Aliases: []string{"postgresql"}, Help: "a schema"},
		{Name: "memory"},
	} {
		if err := r.Register(d); err != nil {
			t.Fatalf("Register(%q) = %v", d.Name, err)
		}
	}
	return r
}

// A name or an alias answers once: a second driver claiming it is
// refused and leaves the registry as it was. Seen failing with Register's
// duplicate check removed (the second postgres replaced the first and was
// listed twice).
func TestRegistryRefusesDuplicates(t *testing.T) {
	r := newTestRegistry(t)
	for _, d := range []driver{
		{Name: "postgres", Help: "another"},
		{Name: "pg", Aliases: []string{"postgresql"}},
		{Name: "postgresql"},
		{Name: "twice", Aliases: []string{"twice"}},
	} {
		if err := r.Register(d); !errors.Is(err, contracts.ErrDuplicateDriver) {
			t.Errorf("Register(%+v) = %v, want ErrDuplicateDriver", d, err)
		}
	}
	if err := r.Register(driver{}); err == nil {
		t.Error("Register of a driver without a name = nil, want an error")
	}
	if got, want := r.Names(), []string{"sqlite", "postgres", "memory"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q after refused registrations, want %q", got, want)
	}
	if d, err := r.Lookup("postgres"); err != nil || d.Help != "a schema" {
		t.Errorf("Lookup(postgres) = %+v, %v; want the first postgres", d, err)
	}
	if _, err := r.Lookup("pg"); err == nil {
		t.Error("Lookup(pg) found the refused driver")
	}
}

// Lookup finds a driver by its name or an alias; an unknown name is an
// *UnknownDriverError that lists the registered names in registration
// order. Seen failing with Lookup ignoring aliases, and with Known left
// empty.
func TestRegistryLookup(t *testing.T) {
	r := newTestRegistry(t)
	if d, err := r.Lookup("postgresql"); err != nil || d.Name != "postgres" {
		t.Errorf("Lookup(postgresql) = %+v, %v; want postgres", d, err)
	}
	_, err := r.Lookup("mysql")
	var unknown *contracts.UnknownDriverError
	if !errors.As(err, &unknown) {
		t.Fatalf("Lookup(mysql) = %v, want an *UnknownDriverError", err)
	}
	if want := []string{"sqlite", "postgres", "memory"}; unknown.Name != "mysql" || !slices.Equal(unknown.Known, want) {
		t.Errorf("error = %+v, want name mysql and known %q", unknown, want)
	}
	if got, want := err.Error(), `unknown store driver "mysql": want sqlite, postgres or memory`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	_, err = contracts.NewRegistry[driver]("model").Lookup("x")
	if err == nil || !strings.Contains(err.Error(), "none is registered") {
		t.Errorf("Lookup in an empty registry = %v, want none is registered", err)
	}
}

// Help and Choices are made from the registered drivers, in order, each
// with its own help text. Seen failing with Help listing names only.
func TestRegistryHelp(t *testing.T) {
	r := newTestRegistry(t)
	if got, want := r.Help(), "sqlite (one file), postgres (a schema) or memory"; got != want {
		t.Errorf("Help() = %q, want %q", got, want)
	}
	if got, want := r.Choices(), "sqlite, postgres or memory"; got != want {
		t.Errorf("Choices() = %q, want %q", got, want)
	}
	for items, want := range map[string]string{"": "", "a": "a", "a,b": "a or b", "a,b,c": "a, b or c"} {
		var list []string
		if items != "" {
			list = strings.Split(items, ",")
		}
		if got := contracts.OrList(list); got != want {
			t.Errorf("OrList(%q) = %q, want %q", list, got, want)
		}
	}
}

// MustRegistry panics on a list that names a driver twice.
func TestMustRegistryPanicsOnDuplicates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustRegistry with a duplicate did not panic")
		}
	}()
	contracts.MustRegistry("executor", driver{Name: "goja"}, driver{Name: "goja"})
}
