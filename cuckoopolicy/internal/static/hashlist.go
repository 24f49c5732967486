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
	n      int
}

// Add appends h.
func (l *HashList) Add(h uint64) {
	if l.n%chunkLen == 0 && l.n/chunkLen == len(l.chunks) {
		l.chunks = append(l.chunks, chunkPool.Get().(*chunk))
	}
	l.chunks[l.n/chunkLen][l.n%chunkLen] = h
	l.n++
}

// Len returns the number of hashes added since the last Reset.
func (l *HashList) Len() int { return l.n }

// At returns the i-th hash added.
func (l *HashList) At(i int) uint64 { return l.chunks[i/chunkLen][i%chunkLen] }

// Reset empties the list and returns its memory to a pool shared by all
// lists.
func (l *HashList) Reset() {
	for i, c := range l.chunks {
		chunkPool.Put(c)
		l.chunks[i] = nil
	}
	l.chunks = l.chunks[:0]
	l.n = 0
}
