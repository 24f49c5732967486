//go:build unix

package whatif

import (
	"os"
	"sync"
)

var kept struct {
	sync.Mutex
	files []*os.File
}

// keepOpen keeps f, and so its descriptor, open until the process exits:
// closing a descriptor of a file drops every fcntl lock the process holds on
// it.
func keepOpen(f *os.File) {
	kept.Lock()
	defer kept.Unlock()
	kept.files = append(kept.files, f)
}
