// Package machine describes the machine a measurement ran on, for the head
// of a report: OS and architecture, CPU model and cache sizes (from Linux's
// /proc and sysfs; "unknown" or nothing elsewhere), memory, Go and Pebble
// versions, and the commit measured.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Revision names the commit the binary was built from: the build's VCS
// stamp, or for go run (which has none) the checkout's HEAD when the run
// starts, since a long run may outlive it. It is "" when neither is known,
// and ends in " (uncommitted changes)" for a modified checkout.
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(rev) >= 7 {
			if modified {
				return rev[:7] + " (uncommitted changes)"
			}
			return rev[:7]
		}
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += " (uncommitted changes)"
	}
	return rev
}

// cpuCache is one cache level of a CPU.
type cpuCache struct {
	level int
	kind  string // Data, Instruction or Unified
	bytes int64
}

// cpuCaches reads CPU 0's caches from Linux's sysfs, once; nil elsewhere.
var cpuCaches = sync.OnceValue(func() []cpuCache {
	var cs []cpuCache
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index[0-9]*")
	for _, d := range dirs {
		read := func(name string) string {
			data, _ := os.ReadFile(filepath.Join(d, name))
			return strings.TrimSpace(string(data))
		}
		level, err := strconv.Atoi(read("level"))
		size := read("size")
		unit := int64(1)
		switch {
		case strings.HasSuffix(size, "K"):
			unit, size = 1<<10, strings.TrimSuffix(size, "K")
		case strings.HasSuffix(size, "M"):
			unit, size = 1<<20, strings.TrimSuffix(size, "M")
		case strings.HasSuffix(size, "G"):
			unit, size = 1<<30, strings.TrimSuffix(size, "G")
		}
		n, err2 := strconv.ParseInt(size, 10, 64)
		if err != nil || err2 != nil || n <= 0 {
			continue
		}
		cs = append(cs, cpuCache{level: level, kind: read("type"), bytes: n * unit})
	}
	slices.SortStableFunc(cs, func(a, b cpuCache) int { return a.level - b.level })
	return cs
})

// LastLevelCache returns the size in bytes of CPU 0's largest cache level,
// or 0 where it cannot be read.
func LastLevelCache() int64 {
	var llc int64
	for _, c := range cpuCaches() {
		llc = max(llc, c.bytes)
	}
	return llc
}

// BinarySize formats a byte count in KiB, MiB or GiB.
func BinarySize(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'g', 4, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'g', 4, 64) + " MiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<10), 'g', 4, 64) + " KiB"
	}
}

// Describe returns Markdown list items, one a line: the machine (OS,
// architecture, CPUs, GOMAXPROCS, memory), the CPU and its caches, and the
// Go and Pebble versions with the commit rev (left out if "").
func Describe(rev string) string {
	var b strings.Builder
	model, cache := "unknown", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				model = strings.TrimSpace(v)
			case "cache size":
				cache = strings.TrimSpace(v)
			}
		}
		f.Close()
	}
	memTotal := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				memTotal = strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:"))
			}
		}
	}
	fmt.Fprintf(&b, "- Machine: %s/%s, %d CPUs (GOMAXPROCS %d), memory %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal)
	fmt.Fprintf(&b, "- CPU: %s", model)
	if cache != "" {
		fmt.Fprintf(&b, ", cache size %s (as /proc/cpuinfo reports it)", cache)
	}
	if cs := cpuCaches(); len(cs) > 0 {
		b.WriteString("; caches of CPU 0: ")
		for i, c := range cs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "L%d %s %s", c.level, strings.ToLower(c.kind), BinarySize(c.bytes))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Go: %s", runtime.Version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/cockroachdb/pebble/v2" {
				fmt.Fprintf(&b, "; Pebble %s", d.Version)
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(&b, "; commit %s", rev)
	}
	b.WriteString("\n")
	return b.String()
}
