//go:build !linux

package workload

import "time"

// deviceWait blocks for d. Outside Linux it uses time.Sleep, whose
// resolution may be far coarser than d; the report prints the measured mean.
func deviceWait(d time.Duration) { time.Sleep(d) }
