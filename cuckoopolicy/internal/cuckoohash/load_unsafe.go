//go:build 386 || amd64 || arm64 || loong64 || ppc64le

package cuckoohash

import "unsafe"

// These are the little-endian architectures among those on which Go's
// compiler counts on cheap unaligned loads (cmd/compile's unalignedOK): a
// bucket is one native load with no bounds check. Everywhere else,
// load_safe.go: on arm, mips and riscv64 an unaligned 8-byte load may fault
// or trap into the kernel; s390x and wasm load unaligned words cheaply, and
// there the compiler already makes binary.LittleEndian.Uint64 one load
// (byte-reversed on big-endian s390x, where a native load would give the
// wrong order).

// LoadWord returns the little-endian 8 bytes of data at byte offset off,
// which the caller has checked: off+8 <= len(data). Here that is one
// unaligned load with no bounds check, which is most of what a lookup does
// besides hashing.
func LoadWord(data []byte, off uint64) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), off))
}

// SlotWord returns four 16-bit slots as one word, slot j in lane j (bits
// 16j to 16j+15): here, one load.
func SlotWord(p *[Slots]uint16) uint64 {
	return *(*uint64)(unsafe.Pointer(p))
}
