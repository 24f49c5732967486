//go:build unix && !linux

package whatif

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// lockShared asks, without taking a lock, whether another process holds a
// lock on the database's LOCK file, opened read-only: these systems have no
// open-file-description locks, and a traditional fcntl lock that this process
// took would be dropped by the next close of any descriptor of the file. It
// does not see a lock this very process holds, nor keep a Pebble from opening
// the database while whatif reads it: run whatif on a checkpoint or a copy.
func lockShared(path string) (func() error, error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return func() error { return nil }, nil
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	err = unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk)
	keepOpen(f) // closing it would drop this process's own locks on LOCK
	if err != nil {
		return nil, fmt.Errorf("whatif: checking the lock on %s: %w", path, err)
	}
	if lk.Type != unix.F_UNLCK {
		return nil, errInUse
	}
	return func() error { return nil }, nil
}
