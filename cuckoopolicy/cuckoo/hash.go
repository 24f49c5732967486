package cuckoo

import "github.com/cespare/xxhash/v2"

// Hash returns the 64-bit xxhash of key, the hash every filter of this
// package is addressed by (see InsertHash, ContainsHash, DeleteHash). It is
// stable across processes and releases, since filters are saved.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }
