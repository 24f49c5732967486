package report

import "fmt"

// pct formats a rate as a percentage: two decimals from 10% up, three
// significant digits below.
func pct(x float64) string {
	switch {
	case x == 0:
		return "0%"
	case x >= 0.1:
		return fmt.Sprintf("%.2f%%", 100*x)
	}
	return fmt.Sprintf("%.3g%%", 100*x)
}

// f2 and f1 format a number with two and one decimals.
func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// ratioStr is " (a/base x)", or "" where base is 0 or a is base.
func ratioStr(a, base float64) string {
	if base == 0 || a == base {
		return ""
	}
	return fmt.Sprintf(" (%.2fx)", a/base)
}
