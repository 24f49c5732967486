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
	// ring holds the IDs in the window, oldest first: it stands in for the
	// event log, from which a service reads back the IDs it expires.
	ring := make([]uint64, 0, window)
	head := 0
	exact := make(map[uint64]bool, window) // the truth, to count mistakes
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	key := make([]byte, 8)
	id := func(n uint64) []byte { binary.BigEndian.PutUint64(key, n); return key }

	slots := float64(4 * filter.Buckets())
	pow := float64(uint64(1)<<fb - 1)
	var (
		next                      uint64 // next fresh ID
		accepted, dropped, falseP int
		newQueries                int
		expectFP, sumLoad         float64
		issued                    []uint64 // recent IDs, for redeliveries
	)
	for range events {
		var ev uint64
		if len(issued) > 0 && r.Float64() < redeliver {
			ev = issued[r.IntN(len(issued))] // a redelivery: may be in the window or have left it
		} else {
			ev = next
			next++
			if len(issued) < 2*window {
				issued = append(issued, ev)
			} else {
				issued[r.IntN(len(issued))] = ev
			}
		}
		seen := exact[ev]
		if !seen {
			// What a false positive would cost here: 2/(m(2^f-1)) per
			// stored fingerprint.
			newQueries++
			expectFP += 2 * float64(filter.Count()) / (slots / 4 * pow)
			sumLoad += filter.LoadFactor()
		}
		if filter.Contains(id(ev)) {
			dropped++
			if !seen {
				falseP++
			}
			continue
		}
		if seen {
			return fmt.Errorf("false negative: event %d is in the window but the filter misses it", ev)
		}
		if len(ring) == window { // expire the oldest
			old := ring[head]
			if !filter.Delete(id(old)) {
				return fmt.Errorf("expiring %d: not in the filter", old)
			}
			delete(exact, old)
			ring[head] = ev
			head = (head + 1) % window
		} else {
			ring = append(ring, ev)
		}
		if err := filter.Insert(id(ev)); err != nil {
			return fmt.Errorf("insert %d: %w", ev, err)
		}
		exact[ev] = true
		accepted++
	}

	fmt.Printf("stream: %d events, %.0f%% redeliveries, window %d IDs\n", events, 100*redeliver, window)
	fmt.Printf("filter: f=%d%s, %d buckets, %.2f bits per windowed ID, load %.3f\n",
		fb, map[bool]string{true: " semi-sorted", false: ""}[semi], filter.Buckets(),
		slots*float64(bitsPerSlot(fb, semi))/float64(window), filter.LoadFactor())
	fmt.Printf("accepted %d, dropped %d (true duplicates %d, new events dropped by a false positive %d)\n",
		accepted, dropped, dropped-falseP, falseP)
	measured := float64(falseP) / float64(newQueries)
	theory := expectFP / float64(newQueries)
	sd := math.Sqrt(expectFP) / float64(newQueries)
	fmt.Printf("false-positive rate over %d lookups of new IDs: measured %.4f%%, theory %.4f%% +- %.4f%% (2 sd; 8*load/2^f at mean load %.3f: %.4f%%)\n",
		newQueries, 100*measured, 100*theory, 200*sd, sumLoad/float64(newQueries),
		100*8*sumLoad/float64(newQueries)/math.Ldexp(1, fb))
	fmt.Println("false negatives: 0")

	data, err := filter.MarshalBinary()
	if err != nil {
		return err
	}
	var restored cuckoo.Filter
	if err := restored.UnmarshalBinary(data); err != nil {
		return err
	}
	for _, ev := range ring {
		if !restored.Contains(id(ev)) {
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
