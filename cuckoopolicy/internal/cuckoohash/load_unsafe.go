//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package cuckoohash

import "unsafe"

// LoadWord returns the little-endian 8 bytes of data at byte offset off,
// which the caller has checked: off+8 <= len(data). On little-endian
// machines that is one unaligned load with no bounds check, which is most of
// what a lookup does besides hashing.
func LoadWord(data []byte, off uint64) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), off))
}

// SlotWord returns four 16-bit slots as one word, slot j in lane j (bits
// 16j to 16j+15): on little-endian machines, one load.
func SlotWord(p *[Slots]uint16) uint64 {
	return *(*uint64)(unsafe.Pointer(p))
}
