package workload

import (
	"syscall"
	"time"
)

// deviceWait blocks the calling thread for d, as a read from a slower device
// would: a nanosleep system call, after lowering the thread's timer slack to
// 1 ns (Linux's default slack, 50 µs, would double a 50 µs delay; Go's
// time.Sleep, on its timer heap, takes about 1 ms for it). The thread is
// blocked in a system call, not spinning: the CPU stays free for other
// goroutines, as it does while a real read waits for the device.
func deviceWait(d time.Duration) {
	const prSetTimerslack = 29
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
