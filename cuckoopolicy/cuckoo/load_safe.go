//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package cuckoo

import "encoding/binary"

// loadWord returns the little-endian 8 bytes of data at byte offset off.
func loadWord(data []byte, off uint64) uint64 {
	return binary.LittleEndian.Uint64(data[off:])
}
