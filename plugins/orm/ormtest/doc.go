// Package ormtest is the conformance suite of the orm plugin: Run boots a
// kernel with the ORM on a database and checks models, domains, reads,
// writes, grouped reads, the guard and migrations against fixed data. A
// storage driver passes when Run passes on it; the orm package runs it on
// SQLite and on Postgres, so both answer every domain identically.
package ormtest
