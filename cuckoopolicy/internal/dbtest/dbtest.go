// Package dbtest is the in-memory Pebble database the tests of package
// cuckoopolicy and package plan share: L0 tables kept apart, absent Gets
// counted by the filters' hits.
package dbtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy"
)

// DB is an in-memory Pebble database whose L0 tables are kept apart
// (no automatic compactions), so that every absent Get probes each of them.
type DB struct {
	T      *testing.T
	FS     vfs.FS
	DB     *pebble.DB
	Keys   int // keys written so far: Key(0) to Key(keys-1)
	Tables int // tables flushed so far
}

// Key is the i-th key the tests write; Absent(i) lies beside it and is never written.
func Key(i int) []byte    { return fmt.Appendf(nil, "key%08d", i) }
func Absent(i int) []byte { return fmt.Appendf(nil, "key%08d.absent", i) }

// New returns a database on a new in-memory file system, not open yet.
func New(t *testing.T) *DB {
	return &DB{T: t, FS: vfs.NewMem()}
}

// Open opens the database with the options configure sets.
func (m *DB) Open(configure func(*pebble.Options)) {
	m.T.Helper()
	opts := &pebble.Options{FS: m.FS, DisableAutomaticCompactions: true, Logger: QuietLogger{}}
	configure(opts)
	db, err := pebble.Open("db", opts)
	if err != nil {
		m.T.Fatal(err)
	}
	m.DB = db
}

// Close closes the database.
func (m *DB) Close() {
	m.T.Helper()
	if err := m.DB.Close(); err != nil {
		m.T.Fatal(err)
	}
	m.DB = nil
}

// FlushTables writes n tables of perTable new keys each, interleaved with the
// keys already there, so that every table's range covers the absent probes.
func (m *DB) FlushTables(n, perTable int) {
	m.T.Helper()
	for range n {
		b := m.DB.NewBatch()
		for j := range perTable {
			if err := b.Set(Key(m.Keys+j), []byte("v"), nil); err != nil {
				m.T.Fatal(err)
			}
		}
		// Widen the table's range to the whole key space.
		if err := b.Set([]byte("key"), nil, nil); err != nil {
			m.T.Fatal(err)
		}
		if err := b.Set([]byte("key~"), nil, nil); err != nil {
			m.T.Fatal(err)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			m.T.Fatal(err)
		}
		if err := m.DB.Flush(); err != nil {
			m.T.Fatal(err)
		}
		m.Keys += perTable
		m.Tables++
	}
}

// AbsentGets reads n absent keys and returns how many times a filter ruled
// out a table (pebble's Filter.Hits) during those reads.
func (m *DB) AbsentGets(n int) int64 {
	m.T.Helper()
	before := m.DB.Metrics().Filter.Hits
	for i := range n {
		_, closer, err := m.DB.Get(Absent(i))
		if err != pebble.ErrNotFound {
			if err == nil {
				closer.Close()
			}
			m.T.Fatalf("Get(%q): %v, want ErrNotFound", Absent(i), err)
		}
	}
	return m.DB.Metrics().Filter.Hits - before
}

// CheckKeys reads every key written back.
func (m *DB) CheckKeys() {
	m.T.Helper()
	for i := range m.Keys {
		v, closer, err := m.DB.Get(Key(i))
		if err != nil {
			m.T.Fatalf("Get(%q): %v: key lost", Key(i), err)
		}
		if string(v) != "v" {
			m.T.Fatalf("Get(%q) = %q, want %q", Key(i), v, "v")
		}
		closer.Close()
	}
}

// Usage returns FilterUsage's rows for level 0 keyed by policy name.
func (m *DB) Usage() map[string]cuckoopolicy.Usage {
	m.T.Helper()
	rows, err := cuckoopolicy.FilterUsage(m.DB)
	if err != nil {
		m.T.Fatal(err)
	}
	out := map[string]cuckoopolicy.Usage{}
	for _, u := range rows {
		if _, dup := out[u.Policy]; dup && u.Level == 0 {
			m.T.Fatalf("two level-0 rows for policy %q: %+v", u.Policy, rows)
		}
		if u.Level == 0 {
			out[u.Policy] = u
		}
	}
	return out
}

// LevelsOnly sets p on every level and registers no reader, as a user who
// skips Apply would.
func LevelsOnly(p pebble.FilterPolicy) func(*pebble.Options) {
	return func(o *pebble.Options) {
		for i := range o.Levels {
			o.Levels[i].FilterPolicy = p
			o.Levels[i].FilterType = pebble.TableFilter
		}
	}
}

// Applied configures the options with cuckoopolicy.Apply(o, p).
func Applied(p pebble.FilterPolicy) func(*pebble.Options) {
	return func(o *pebble.Options) { cuckoopolicy.Apply(o, p) }
}

// OptionsFile parses the database's newest OPTIONS file with ParseHooks, as a
// program that rebuilds its options from disk does.
func (m *DB) OptionsFile() *pebble.Options {
	m.T.Helper()
	names, err := m.FS.List("db")
	if err != nil {
		m.T.Fatal(err)
	}
	var newest string
	for _, n := range names {
		if strings.HasPrefix(n, "OPTIONS-") && n > newest {
			newest = n
		}
	}
	f, err := m.FS.Open(m.FS.PathJoin("db", newest))
	if err != nil {
		m.T.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		m.T.Fatal(err)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil {
		m.T.Fatal(err)
	}
	opts := &pebble.Options{}
	if err := opts.Parse(string(buf), cuckoopolicy.ParseHooks()); err != nil {
		m.T.Fatalf("parsing %s: %v", newest, err)
	}
	return opts
}

// QuietLogger drops Pebble's informational messages.
type QuietLogger struct{}

func (QuietLogger) Infof(string, ...any)         {}
func (QuietLogger) Errorf(f string, args ...any) { fmt.Printf(f+"\n", args...) }
func (QuietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
