//go:build !(amd64 || arm64) || purego

package static

import "unsafe"

const hasPrefetch = false

// prefetch does nothing where hasPrefetch is false: the builder touches the
// buckets with loads instead.
func prefetch(base unsafe.Pointer, idx *uint32, n int, stride int) {}
