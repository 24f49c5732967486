package static

import "sync"

// chunkLen is the number of hashes in a chunk: 8 KiB of them, so that a list
// of n hashes takes at most 8 KiB more than 8n bytes, besides a pointer per
// chunk (0.1% more).
const chunkLen = 1 << 10

type chunk [chunkLen]uint64

var chunkPool = sync.Pool{New: func() any { return new(chunk) }}

// HashList collects 64-bit key hashes in pooled fixed-size chunks, so that
// collecting n hashes costs 8n bytes and never copies. The zero HashList is
// empty and ready to use. A HashList is not safe for concurrent use.
type HashList struct {
	chunks []*chunk
	// tail is the used part of the last chunk, with the chunk's capacity:
	// Add is an append into it, small enough to inline into the writer's
	// AddKey, and takes a new chunk only when it is full.
	tail []uint64
	n    int
}

// Add appends h.
func (l *HashList) Add(h uint64) {
	if len(l.tail) == cap(l.tail) {
		l.grow()
	}
	l.tail = append(l.tail, h)
	l.n++
}

// grow starts a new chunk. It is kept out of line so that Add inlines.
//
//go:noinline
func (l *HashList) grow() {
	c := chunkPool.Get().(*chunk)
	l.chunks = append(l.chunks, c)
	l.tail = c[:0]
}

// Len returns the number of hashes added since the last Reset.
func (l *HashList) Len() int { return l.n }

// At returns the i-th hash added.
func (l *HashList) At(i int) uint64 { return l.chunks[i/chunkLen][i%chunkLen] }

// part returns the hashes of chunk c, in the order they were added: the
// builder's passes read the list a chunk at a time rather than through At.
func (l *HashList) part(c int) []uint64 {
	if c == len(l.chunks)-1 {
		return l.tail
	}
	return l.chunks[c][:]
}

// Reset empties the list and returns its memory to a pool shared by all
// lists.
func (l *HashList) Reset() {
	for i, c := range l.chunks {
		chunkPool.Put(c)
		l.chunks[i] = nil
	}
	l.chunks = l.chunks[:0]
	l.tail = nil
	l.n = 0
}
