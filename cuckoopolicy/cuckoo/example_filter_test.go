package cuckoo_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/cuckoo"
)

func ExampleFilter() {
	f, err := cuckoo.New(1000, cuckoo.Config{})
	if err != nil {
		panic(err)
	}
	f.Insert([]byte("apple"))
	f.Insert([]byte("banana"))
	f.Insert([]byte("apple")) // a second copy
	fmt.Println(f.Contains([]byte("apple")), f.Contains([]byte("cherry")), f.Count())

	f.Delete([]byte("apple")) // removes one copy
	fmt.Println(f.Contains([]byte("apple")), f.Count())
	f.Delete([]byte("apple"))
	fmt.Println(f.Contains([]byte("apple")), f.Count())
	// Output:
	// true false 3
	// true 2
	// false 1
}

// Past its capacity a filter keeps taking keys until it is nearly full;
// ErrFull then leaves it unchanged.
func ExampleErrFull() {
	f, _ := cuckoo.New(10000, cuckoo.Config{FingerprintBits: 16})
	n := 0
	for ; ; n++ {
		if err := f.Insert([]byte("key-" + strconv.Itoa(n))); errors.Is(err, cuckoo.ErrFull) {
			break
		}
	}
	fmt.Println("capacity reached:", n >= 10000)
	fmt.Println("load above 95%:", f.LoadFactor() > 0.95)
	fmt.Println("every key kept:", f.Count() == n && f.Contains([]byte("key-0")))
	// Output:
	// capacity reached: true
	// load above 95%: true
	// every key kept: true
}

func ExampleFilter_MarshalBinary() {
	f, _ := cuckoo.New(100000, cuckoo.Config{FingerprintBits: 13, SemiSort: true})
	for i := range 500 {
		f.Insert([]byte("user:" + strconv.Itoa(i)))
	}
	data, _ := f.MarshalBinary()
	// 500 keys in a table for 100000: snappy shrinks the mostly empty
	// table, of 48 bits a bucket, to a small fraction.
	table := f.Buckets() * 48 / 8
	fmt.Println("under a tenth of the table:", len(data) < int(table/10))

	var g cuckoo.Filter
	if err := g.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(g.Count(), g.Contains([]byte("user:42")))

	data[len(data)/2] ^= 1
	fmt.Println(errors.Is(g.UnmarshalBinary(data), cuckoo.ErrCorrupt))
	// Output:
	// under a tenth of the table: true
	// 500 true
	// true
}

func ExampleGrowing() {
	// Start small; stay under a 1% false-positive rate however many keys come.
	g, _ := cuckoo.NewGrowing(100, 0.01, cuckoo.Config{})
	for i := range 10000 {
		g.Insert([]byte("event-" + strconv.Itoa(i)))
	}
	for i := range 5000 {
		g.Delete([]byte("event-" + strconv.Itoa(i)))
	}
	fmt.Println(g.Count(), g.Stages())
	fmt.Println(g.Contains([]byte("event-9999")), g.FalsePositiveBound() < 0.01)
	// Output:
	// 5000 7
	// true true
}

func ExampleGrowing_MarshalBinary() {
	g, _ := cuckoo.NewGrowing(100, 0.01, cuckoo.Config{})
	for i := range 1000 {
		g.Insert([]byte("event-" + strconv.Itoa(i)))
	}
	data, _ := g.MarshalBinary()

	var h cuckoo.Growing
	if err := h.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(h.Count(), h.Stages(), h.Contains([]byte("event-500")))
	// The decoded filter goes on as the original would.
	h.Insert([]byte("event-1000"))
	g.Insert([]byte("event-1000"))
	a, _ := g.MarshalBinary()
	b, _ := h.MarshalBinary()
	fmt.Println(bytes.Equal(a, b))

	data[len(data)/2] ^= 1
	fmt.Println(errors.Is(h.UnmarshalBinary(data), cuckoo.ErrCorrupt))
	// Output:
	// 1000 4 true
	// true
	// true
}

func ExampleConcurrent() {
	c, _ := cuckoo.NewConcurrent(4000, cuckoo.Config{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				c.Insert([]byte(strconv.Itoa(w) + "/" + strconv.Itoa(i)))
			}
		}()
	}
	wg.Wait()
	fmt.Println(c.Count(), c.Contains([]byte("3/999")))
	// Output:
	// 4000 true
}
