package cuckoo

import (
	"sync"
	"testing"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/internal/testkit"
)

// TestConcurrent runs writers and readers on one Concurrent (run it with
// -race): each writer inserts its own keys and deletes every third; at the
// end every key not deleted is found.
func TestConcurrent(t *testing.T) {
	const writers, perWriter = 4, 3000
	c, err := NewConcurrent(writers*perWriter, Config{FingerprintBits: 14, SemiSort: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range uint64(writers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for i := range uint64(perWriter) {
				if err := c.Insert(testkit.Key(buf, w, i)); err != nil {
					t.Error(err)
					return
				}
				if !c.Contains(testkit.Key(buf, w, i)) {
					t.Errorf("writer %d: key %d not found after insert", w, i)
				}
				if i%3 == 0 && !c.Delete(testkit.Key(buf, w, i)) {
					t.Errorf("writer %d: delete %d failed", w, i)
				}
			}
		}()
	}
	for r := range uint64(2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for i := range uint64(perWriter) {
				c.Contains(testkit.Key(buf, 100+r, i))
				c.Count()
				c.LoadFactor()
				if i%500 == 0 {
					if _, err := c.MarshalBinary(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	buf := make([]byte, 16)
	for w := range uint64(writers) {
		for i := range uint64(perWriter) {
			if i%3 != 0 && !c.Contains(testkit.Key(buf, w, i)) {
				t.Fatalf("writer %d: key %d lost", w, i)
			}
		}
	}
	if want := writers * (perWriter - perWriter/3); c.Count() != want {
		t.Fatalf("count %d, want %d", c.Count(), want)
	}
	data, _ := c.MarshalBinary()
	var d Concurrent
	if err := d.UnmarshalBinary(data); err != nil || d.Count() != c.Count() {
		t.Fatalf("round trip: %v, count %d", err, d.Count())
	}
	c.Reset()
	if c.Count() != 0 {
		t.Fatal("Reset left keys")
	}
	if _, err := NewConcurrent(0, Config{}); err == nil {
		t.Fatal("NewConcurrent(0) succeeded")
	}
}

// TestConcurrentReaders: a plain Filter answers concurrent lookups while no
// one writes (run it with -race).
func TestConcurrentReaders(t *testing.T) {
	f, _ := New(5000, Config{})
	fillUntilFull(t, f, 1) // the stash is in use, so lookups read it too
	var wg sync.WaitGroup
	for r := range uint64(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for i := range uint64(5000) {
				if !f.Contains(testkit.Key(buf, 1, i)) {
					t.Errorf("reader %d: key %d not found", r, i)
				}
				f.Contains(testkit.Key(buf, 2, i))
			}
		}()
	}
	wg.Wait()
}

// TestConcurrentMatchesFilter runs one sequence of operations, by key and by
// hash, on a Concurrent and on a Filter of the same configuration: every
// answer, and in the end the encoded bytes, agree.
func TestConcurrentMatchesFilter(t *testing.T) {
	cfg := Config{FingerprintBits: 10, SemiSort: true, Seed: 3}
	c, err := NewConcurrent(2000, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := New(2000, cfg)
	if c.Buckets() != f.Buckets() || c.Config() != f.Config() {
		t.Fatalf("Concurrent has %d buckets and %+v, Filter %d and %+v", c.Buckets(), c.Config(), f.Buckets(), f.Config())
	}
	buf := make([]byte, 16)
	for i := range uint64(3000) {
		k := testkit.Key(buf, 9, i%2500)
		h := Hash(k)
		var a, b bool
		switch i % 6 {
		case 0, 1:
			a, b = c.Insert(k) == nil, f.Insert(k) == nil
		case 2, 3:
			a, b = c.InsertHash(h) == nil, f.InsertHash(h) == nil
		case 4:
			a, b = c.Delete(k), f.Delete(k)
		case 5:
			a, b = c.DeleteHash(h), f.DeleteHash(h)
		}
		if a != b {
			t.Fatalf("op %d: Concurrent answered %v, Filter %v", i, a, b)
		}
		if c.Contains(k) != f.Contains(k) || c.ContainsHash(h^1) != f.ContainsHash(h^1) {
			t.Fatalf("op %d: lookups differ", i)
		}
	}
	cb, _ := c.MarshalBinary()
	fb, _ := f.MarshalBinary()
	if string(cb) != string(fb) || c.Count() != f.Count() {
		t.Fatalf("Concurrent and Filter ended differently (counts %d and %d)", c.Count(), f.Count())
	}
}
