//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package cuckoohash

import "encoding/binary"

// LoadWord returns the little-endian 8 bytes of data at byte offset off.
func LoadWord(data []byte, off uint64) uint64 {
	return binary.LittleEndian.Uint64(data[off:])
}

// SlotWord returns four 16-bit slots as one word, slot j in lane j (bits
// 16j to 16j+15).
func SlotWord(p *[Slots]uint16) uint64 {
	return uint64(p[0]) | uint64(p[1])<<16 | uint64(p[2])<<32 | uint64(p[3])<<48
}
