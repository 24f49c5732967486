//go:build !unix

package workload

import "time"

// processCPU is not measured outside Unix: the report shows 0.
func processCPU() time.Duration { return 0 }
