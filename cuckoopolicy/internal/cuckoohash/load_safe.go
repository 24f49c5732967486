//go:build !(386 || amd64 || arm64 || loong64 || ppc64le)

package cuckoohash

import "encoding/binary"

// LoadWord returns the little-endian 8 bytes of data at byte offset off.
// On s390x and wasm the compiler makes it one load; elsewhere (arm, mips,
// riscv64, ...) it assembles the word from byte loads.
func LoadWord(data []byte, off uint64) uint64 {
	return binary.LittleEndian.Uint64(data[off:])
}

// SlotWord returns four 16-bit slots as one word, slot j in lane j (bits
// 16j to 16j+15).
func SlotWord(p *[Slots]uint16) uint64 {
	return uint64(p[0]) | uint64(p[1])<<16 | uint64(p[2])<<32 | uint64(p[3])<<48
}
