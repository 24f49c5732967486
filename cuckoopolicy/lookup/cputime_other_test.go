//go:build !linux

package lookup

// threadCPU reports that this platform does not tell a thread's CPU time.
func threadCPU() (int64, bool) { return 0, false }
