package whatif

import "fmt"

// formatSize returns n in the largest binary unit that keeps it at least 1,
// with the exact byte count when the unit rounds.
func formatSize(n uint64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	u := -1
	for u+1 < len(units) && n >= 1<<(10*(u+2)) {
		u++
	}
	if u < 0 {
		return plural(int(n), "byte")
	}
	v := float64(n) / float64(uint64(1)<<(10*(u+1)))
	if n%(1<<(10*(u+1))) == 0 {
		return fmt.Sprintf("%d %s", n>>(10*(u+1)), units[u])
	}
	return fmt.Sprintf("%.2f %s (%s bytes)", v, units[u], num(n))
}
