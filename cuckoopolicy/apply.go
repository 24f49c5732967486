package cuckoopolicy

import (
	"cmp"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Apply configures opts to write filters with p on every level and to keep
// reading the filters that tables already carry. It sets p as the FilterPolicy (and pebble.TableFilter as
// the FilterType) of every level, and registers in opts.Filters, creating the
// map if it is nil and keeping every entry already there: p itself, Pebble's
// bloom filter (bloom.FilterPolicy(10), which reads bloom blocks of every
// budget) and this package's reader (FilterPolicy(10), which reads every
// block this package writes).
//
// Pebble reads a table's filter only when opts.Filters (or one of the levels'
// policies, which Pebble adds to it) holds the name of the policy that wrote
// it. A database switched from bloom to cuckoo by setting the levels alone
// reads its old tables with no filter at all until compactions rewrite them;
// with Apply it keeps filtering them. The same holds for a rollback: Apply(opts,
// bloom.FilterPolicy(10)) keeps the cuckoo tables filtered, where options
// that merely set bloom on the levels do not. Usage.ReadBy tells whether
// options read a table's filters, and FilterUsage how far compactions have
// carried a switch.
//
// Apply is idempotent. It panics if opts or p is nil, as a programming error;
// p may be pebble.NoFilterPolicy, which writes no new filters and still reads
// the old ones.
//
// A database that only calls Get, which never reads L6 filters, may set
// opts.Levels[6].FilterPolicy = pebble.NoFilterPolicy after Apply, as
// CockroachDB does with its bloom filters.
func Apply(opts *pebble.Options, p pebble.FilterPolicy) {
	if opts == nil {
		panic("cuckoopolicy: Apply with nil *pebble.Options")
	}
	if p == nil {
		panic("cuckoopolicy: Apply with nil pebble.FilterPolicy")
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = p
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	if opts.Filters == nil {
		opts.Filters = make(map[string]pebble.FilterPolicy)
	}
	for _, r := range []pebble.FilterPolicy{p, bloom.FilterPolicy(10), FilterPolicy(10)} {
		if r == pebble.NoFilterPolicy {
			continue
		}
		if _, ok := opts.Filters[r.Name()]; !ok {
			opts.Filters[r.Name()] = r
		}
	}
}

// ParseHooks returns hooks for pebble.Options.Parse that rebuild the filter
// policies an OPTIONS file names, with ParseFilterPolicy. A parse sets each
// level's policy from its name alone, so the parsed options read only the
// filters of the families the levels name now: a database switched from
// bloom to cuckoo parses to options that skip its remaining bloom tables'
// filters. Call Apply (or plan.Apply) on the parsed options before opening the
// database; Usage.ReadBy checks the result.
func ParseHooks() *pebble.ParseHooks {
	return &pebble.ParseHooks{NewFilterPolicy: ParseFilterPolicy}
}

// Usage is one row of FilterUsage: the tables of one level whose filter was
// written by one policy.
type Usage struct {
	Level       int    // LSM level, 0 to 6
	Policy      string // the tables' filter policy name; "" for tables without a filter
	Unfiltered  bool   // this package's blocks that hold no filter: "may contain" for every key
	Tables      int    // number of tables
	Bytes       uint64 // their file bytes
	FilterBytes uint64 // their filter blocks' bytes
	Entries     uint64 // their entries (table property rocksdb.num.entries): every version and tombstone counts
}

// BitsPerEntry returns the filter bits per entry of the row's tables, or 0 if
// they hold no entries. A filter holds each key once, whatever its versions,
// so where keys have many versions this is below the policy's bits per key.
func (u Usage) BitsPerEntry() float64 {
	if u.Entries == 0 {
		return 0
	}
	return 8 * float64(u.FilterBytes) / float64(u.Entries)
}

// ReadBy reports whether a database opened with opts reads the filters of
// the row's tables: true for a row without filters (Policy ""), otherwise
// whether opts.Filters or one of opts.Levels' policies (which Pebble adds to
// opts.Filters when it opens the database) has the name u.Policy. A row
// ReadBy reports false for is a set of tables that every point lookup reads
// as if they had no filter, until compactions rewrite them: Apply (and
// plan.Apply) register the readers of both families. A nil opts reads no
// filter.
func (u Usage) ReadBy(opts *pebble.Options) bool {
	if u.Policy == "" {
		return true
	}
	if opts == nil {
		return false
	}
	if p, ok := opts.Filters[u.Policy]; ok && p != nil {
		return true
	}
	for _, l := range opts.Levels {
		if l.FilterPolicy != nil && l.FilterPolicy != pebble.NoFilterPolicy && l.FilterPolicy.Name() == u.Policy {
			return true
		}
	}
	return false
}

// FilterUsage returns, for each level and each filter policy name found
// there, how many tables carry that policy's filter, their bytes, filter bytes
// and entries, from db.SSTables(pebble.WithProperties()). Rows are ordered by
// level, then by policy name, a policy's unfiltered blocks (Unfiltered: a
// live plan writes them where its plan has no filter) in a row after its
// others; levels without tables have no row. It is how a
// switch is watched: the rows of the old policy shrink as compactions rewrite
// the tables.
//
// The figures are a snapshot: flushes and compactions may change the LSM
// while it runs. A virtual table (left by an excise or a partial ingest)
// carries only its backing table's scaled common properties, so it is counted
// with Policy "" and FilterBytes 0. FilterUsage returns the error SSTables
// returns, and on a closed database it panics as SSTables does.
func FilterUsage(db *pebble.DB) ([]Usage, error) {
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return nil, err
	}
	var rows []Usage
	for level, tables := range levels {
		start := len(rows)
		for _, t := range tables {
			var policy string
			var filterBytes, keys uint64
			if p := t.Properties; p != nil {
				policy, filterBytes, keys = p.FilterPolicyName, p.FilterSize, p.NumEntries
			}
			// A block of this package's with entries behind it is the long
			// trailer alone only when it holds no filter: a filter of one
			// key or more takes more.
			unfiltered := policy == PolicyName && filterBytes == trailerLen && keys > 0
			i := slices.IndexFunc(rows[start:], func(u Usage) bool { return u.Policy == policy && u.Unfiltered == unfiltered })
			if i < 0 {
				rows = append(rows, Usage{Level: level, Policy: policy, Unfiltered: unfiltered})
				i = len(rows) - 1 - start
			}
			u := &rows[start+i]
			u.Tables++
			u.Bytes += t.Size
			u.FilterBytes += filterBytes
			u.Entries += keys
		}
		slices.SortFunc(rows[start:], func(a, b Usage) int {
			if c := cmp.Compare(a.Policy, b.Policy); c != 0 {
				return c
			}
			return cmp.Compare(btoi(a.Unfiltered), btoi(b.Unfiltered))
		})
	}
	return rows, nil
}

// Mismatch is a FilterUsage row whose tables do not carry the filter the
// options write on their level: tables of another family, or without a
// filter (unfiltered blocks included) where the level has one, or with one
// where it has none.
type Mismatch struct {
	Usage
	Want  string  // the policy name the options write on the level; "" for no filter
	Share float64 // the row's share of the level's entries, 0 to 1
}

// Mismatches returns the rows of FilterUsage's rows whose tables do not
// carry the filter opts write on their level, with their share of the
// level's entries: the tables a switch, a plan or a rollback has not reached
// yet. A level's policy is opts.Levels[l].FilterPolicy, or, where that is
// nil, the level above's, as Pebble has it; pebble.NoFilterPolicy writes no
// filter. Policies compare by name, that is by family: a change of budget
// within a family, which the name does not record, is not a mismatch; a row
// of unfiltered blocks (Usage.Unfiltered) on a level with a filter is one. An
// empty result means every table carries its level's family, with a filter
// where the level has one.
//
// An L6 table changes filter only when a compaction brings it keys from
// L5: Mismatches is how to watch a rollback reach them.
func Mismatches(rows []Usage, opts *pebble.Options) []Mismatch {
	var want [7]pebble.FilterPolicy
	if opts != nil {
		want = levelPolicies(opts)
	}
	var entries [7]uint64
	for _, u := range rows {
		if u.Level >= 0 && u.Level < len(entries) {
			entries[u.Level] += u.Entries
		}
	}
	var out []Mismatch
	for _, u := range rows {
		if u.Level < 0 || u.Level >= len(want) {
			continue
		}
		name := ""
		if p := want[u.Level]; p != nil {
			name = p.Name()
		}
		if u.Policy == name && !(u.Unfiltered && name != "") {
			continue
		}
		m := Mismatch{Usage: u, Want: name}
		if entries[u.Level] > 0 {
			m.Share = float64(u.Entries) / float64(entries[u.Level])
		}
		out = append(out, m)
	}
	return out
}

// levelPolicies is the policy each level of opts writes: a nil level takes
// the level above's, as Pebble does; nil for no filter.
func levelPolicies(opts *pebble.Options) [7]pebble.FilterPolicy {
	var p [7]pebble.FilterPolicy
	var prev pebble.FilterPolicy
	for l := range p {
		fp := opts.Levels[l].FilterPolicy
		if fp == nil {
			fp = prev
		}
		prev = fp
		if fp != pebble.NoFilterPolicy {
			p[l] = fp
		}
	}
	return p
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
