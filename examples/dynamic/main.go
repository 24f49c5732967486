// Command dynamic deduplicates a stream of events with a cuckoo filter whose
// entries expire: the filter remembers the IDs of the last -window accepted
// events, a redelivered ID seen within the window is dropped, and an ID that
// leaves the window is deleted from the filter, which a Bloom filter could
// not do. An exact set runs beside it to count the filter's mistakes: false
// positives (new events wrongly dropped) against the rate theory predicts,
// and false negatives, which must be zero.
//
// At the end the filter is checkpointed with MarshalBinary, restored, and
// checked against the original.
//
//	go run ./examples/dynamic -events 2000000 -window 100000 -f 12
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

func main() {
	events := flag.Int("events", 2_000_000, "events in the stream")
	window := flag.Int("window", 100_000, "accepted events whose IDs are remembered")
	redeliver := flag.Float64("redeliver", 0.1, "fraction of events that redeliver a recent ID")
	f := flag.Int("f", 12, "fingerprint bits")
	semi := flag.Bool("semi", false, "semi-sorted buckets (one bit less per key)")
	seed := flag.Uint64("seed", 1, "seed of the stream and the filter")
	flag.Parse()
	if err := run(*events, *window, *redeliver, *f, *semi, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "dynamic:", err)
		os.Exit(1)
	}
}

func run(events, window int, redeliver float64, fb int, semi bool, seed uint64) error {
	if window < 1 || events < 1 || redeliver < 0 || redeliver > 1 {
		return fmt.Errorf("need -events >= 1, -window >= 1, 0 <= -redeliver <= 1")
	}
	filter, err := cuckoo.New(window, cuckoo.Config{FingerprintBits: fb, SemiSort: semi, Seed: seed})
	if err != nil {
		return err
	}
	fb = filter.Config().FingerprintBits // -f 0 means the default width
	d := newDedup(filter, window)
	s := &stream{r: rand.New(rand.NewPCG(seed, 0x5eed)), redeliver: redeliver, window: window}
	for range events {
		if err := d.handle(s.event()); err != nil {
			return err
		}
	}

	fmt.Printf("stream: %d events, %.0f%% redeliveries, window %d IDs\n", events, 100*redeliver, window)
	d.report(fb, semi)
	return checkpoint(filter, d.ring)
}

// stream makes the events: fresh IDs, and a -redeliver share of recent
// ones again.
type stream struct {
	r         *rand.Rand
	redeliver float64
	window    int
	next      uint64   // next fresh ID
	issued    []uint64 // recent IDs, for redeliveries
}

// event returns the next event's ID.
func (s *stream) event() uint64 {
	if len(s.issued) > 0 && s.r.Float64() < s.redeliver {
		return s.issued[s.r.IntN(len(s.issued))] // a redelivery: may be in the window or have left it
	}
	ev := s.next
	s.next++
	if len(s.issued) < 2*s.window {
		s.issued = append(s.issued, ev)
	} else {
		s.issued[s.r.IntN(len(s.issued))] = ev
	}
	return ev
}

// dedup is the deduplicator: the filter of the windowed IDs, with the exact
// set beside it and counts of what each did.
type dedup struct {
	filter *cuckoo.Filter
	window int
	// ring holds the IDs in the window, oldest first: it stands in for the
	// event log, from which a service reads back the IDs it expires.
	ring  []uint64
	head  int
	exact map[uint64]bool // the truth, to count mistakes
	key   []byte

	slots, pow                float64
	accepted, dropped, falseP int
	newQueries                int
	expectFP, sumLoad         float64
}

func newDedup(filter *cuckoo.Filter, window int) *dedup {
	fb := filter.Config().FingerprintBits
	return &dedup{
		filter: filter,
		window: window,
		ring:   make([]uint64, 0, window),
		exact:  make(map[uint64]bool, window),
		key:    make([]byte, 8),
		slots:  float64(4 * filter.Buckets()),
		pow:    float64(uint64(1)<<fb - 1),
	}
}

// id returns the filter key of ID n.
func (d *dedup) id(n uint64) []byte {
	binary.BigEndian.PutUint64(d.key, n)
	return d.key
}

// handle drops the event if the filter has seen its ID and accepts it
// otherwise. It fails on a false negative.
func (d *dedup) handle(ev uint64) error {
	seen := d.exact[ev]
	if !seen {
		// What a false positive would cost here: 2/(m(2^f-1)) per
		// stored fingerprint.
		d.newQueries++
		d.expectFP += 2 * float64(d.filter.Count()) / (d.slots / 4 * d.pow)
		d.sumLoad += d.filter.LoadFactor()
	}
	if d.filter.Contains(d.id(ev)) {
		d.dropped++
		if !seen {
			d.falseP++
		}
		return nil
	}
	if seen {
		return fmt.Errorf("false negative: event %d is in the window but the filter misses it", ev)
	}
	return d.accept(ev)
}

// accept adds ev to the window, expiring the oldest ID when it is full.
func (d *dedup) accept(ev uint64) error {
	if len(d.ring) == d.window { // expire the oldest
		old := d.ring[d.head]
		if !d.filter.Delete(d.id(old)) {
			return fmt.Errorf("expiring %d: not in the filter", old)
		}
		delete(d.exact, old)
		d.ring[d.head] = ev
		d.head = (d.head + 1) % d.window
	} else {
		d.ring = append(d.ring, ev)
	}
	if err := d.filter.Insert(d.id(ev)); err != nil {
		return fmt.Errorf("insert %d: %w", ev, err)
	}
	d.exact[ev] = true
	d.accepted++
	return nil
}

// report prints the filter, what it dropped, and its false-positive rate
// beside the theory's.
func (d *dedup) report(fb int, semi bool) {
	fmt.Printf("filter: f=%d%s, %d buckets, %.2f bits per windowed ID, load %.3f\n",
		fb, map[bool]string{true: " semi-sorted", false: ""}[semi], d.filter.Buckets(),
		d.slots*float64(bitsPerSlot(fb, semi))/float64(d.window), d.filter.LoadFactor())
	fmt.Printf("accepted %d, dropped %d (true duplicates %d, new events dropped by a false positive %d)\n",
		d.accepted, d.dropped, d.dropped-d.falseP, d.falseP)
	measured := float64(d.falseP) / float64(d.newQueries)
	theory := d.expectFP / float64(d.newQueries)
	sd := math.Sqrt(d.expectFP) / float64(d.newQueries)
	fmt.Printf("false-positive rate over %d lookups of new IDs: measured %.4f%%, theory %.4f%% +- %.4f%% (2 sd; 8*load/2^f at mean load %.3f: %.4f%%)\n",
		d.newQueries, 100*measured, 100*theory, 200*sd, d.sumLoad/float64(d.newQueries),
		100*8*d.sumLoad/float64(d.newQueries)/math.Ldexp(1, fb))
	fmt.Println("false negatives: 0")
}

// checkpoint marshals the filter, restores it, and checks that the restored
// filter holds every windowed ID.
func checkpoint(filter *cuckoo.Filter, ring []uint64) error {
	data, err := filter.MarshalBinary()
	if err != nil {
		return err
	}
	var restored cuckoo.Filter
	if err := restored.UnmarshalBinary(data); err != nil {
		return err
	}
	key := make([]byte, 8)
	for _, ev := range ring {
		binary.BigEndian.PutUint64(key, ev)
		if !restored.Contains(key) {
			return fmt.Errorf("restored filter misses %d", ev)
		}
	}
	fmt.Printf("checkpoint: %d bytes (%.2f bits per ID), restored with all %d windowed IDs\n",
		len(data), float64(8*len(data))/float64(len(ring)), len(ring))
	return nil
}

// bitsPerSlot is the table's bits per slot.
func bitsPerSlot(f int, semi bool) int {
	if semi {
		return f - 1
	}
	return max(f, 4)
}
