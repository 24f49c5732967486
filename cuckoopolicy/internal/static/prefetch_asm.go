//go:build (amd64 || arm64) && !purego

package static

import "unsafe"

// hasPrefetch reports whether prefetch is available. Where it is not, the
// builder touches the buckets with loads instead, which has much the same
// effect on the cache but holds up the core until the loads return.
const hasPrefetch = true

// prefetch asks the cache for the n lines at base + idx[i]*stride
// (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64). A prefetch is a hint: it
// never faults, changes no memory and waits for nothing.
//
//go:noescape
func prefetch(base unsafe.Pointer, idx *uint32, n int, stride int)
