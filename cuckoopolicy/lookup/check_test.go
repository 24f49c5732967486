package lookup

import (
	"bytes"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pebble-cuckoo/pebble-cuckoo/internal/pebbletest"
)

// getter is one way to Get a key.
type getter struct {
	name string
	get  func(pebble.Reader, []byte) ([]byte, io.Closer, error)
	has  func(pebble.Reader, []byte) (bool, error)
}

// getters are the ways under test for a run: the package's functions where
// the comparer is Pebble's default, Filtered with the run's comparer, and the
// run's Adaptive.
func (r *run) getters() []getter {
	f := Filtered{Comparer: r.cfg.keys.comparer()}
	g := []getter{
		{"Filtered", f.Get, f.Has},
		{"Adaptive", r.adapt.Get, r.adapt.Has},
	}
	if f.Comparer == pebble.DefaultComparer {
		g = append(g, getter{"lookup", Get, Has})
	}
	return g
}

// check asks every key of keys through rd's Get and every getter, and fails
// the test on any difference. It counts what it asked.
func (r *run) check(what string, rd pebble.Reader, keys [][]byte) {
	r.t.Helper()
	if what == "db" {
		r.seeLevels()
	}
	f := &pebbletest.Failures{T: r.t, What: fmt.Sprintf("%s: %s", r.cfg.name, what), Kind: "answers differ from Get's"}
	getters := r.getters()
	for _, k := range keys {
		want, closer, err := rd.Get(k)
		if err != nil && err != pebble.ErrNotFound {
			r.t.Fatalf("%s: Get(%q): %v", what, k, err)
		}
		wantFound := err == nil
		if wantFound {
			want = append([]byte(nil), want...)
			r.must(closer.Close())
		}
		r.count(what, k, wantFound)
		for _, g := range getters {
			got, closer, gotErr := g.get(rd, k)
			switch {
			case err == nil && gotErr == pebble.ErrNotFound:
				r.counts["lost"]++
				f.Add("%s.Get(%q): lost key, Get found %q", g.name, k, want)
			case gotErr != err:
				f.Add("%s.Get(%q): error %v, Get's %v", g.name, k, gotErr, err)
			case gotErr == nil && !bytes.Equal(got, want): // nil and empty alike, as Get gives them
				f.Add("%s.Get(%q) = %q, Get's %q", g.name, k, got, want)
			}
			if gotErr == nil {
				r.must(closer.Close())
			}
			if found, err := g.has(rd, k); err != nil || found != wantFound {
				f.Add("%s.Has(%q) = %v, %v; want %v", g.name, k, found, err, wantFound)
			}
		}
	}
	f.Check()
}

// count tallies a key asked by what its reader's Get found and, on the
// database, by its last write.
func (r *run) count(what string, k []byte, found bool) {
	switch {
	case found:
		r.counts["present"]++
	default:
		r.counts["absent"]++
	}
	if what != "db" {
		return
	}
	switch r.last[string(k)] {
	case 'd', 'r':
		r.counts["deleted"]++
	case 'm':
		r.counts["merged"]++
	}
}
