package whatif

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// ErrBadSize reports a size ParseSize cannot read.
var ErrBadSize = errors.New("whatif: bad size")

// sizeUnits are the units ParseSize knows, by lower-case name: powers of
// 1024 with an i (KiB), powers of 1000 without (KB), as the IEC and SI
// prefixes say.
var sizeUnits = map[string]uint64{
	"":    1,
	"b":   1,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
}

// ParseSize reads a size in bytes: a number, optionally followed (spaces
// allowed between) by a unit, case-insensitive: B, KiB, MiB, GiB, TiB
// (powers of 1024) or KB, MB, GB, TB (powers of 1000). "64MiB" is 67108864,
// "1.5GB" 1500000000. A fraction is allowed with a unit and rounds down to a
// whole byte; a plain byte count is a whole number. It returns an error
// wrapping ErrBadSize for anything else: no number, a sign, an unknown unit,
// a size of 2^64 bytes or more. Zero is a size: callers that need more say so.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mul, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%w %q: want a number of bytes, optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), as in 64MiB", ErrBadSize, s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		hi, v := bits.Mul64(n, mul)
		if err != nil || hi != 0 {
			return 0, fmt.Errorf("%w %q: 2^64 bytes or more", ErrBadSize, s)
		}
		return v, nil
	}
	if unit == "" || unit == "b" {
		return 0, fmt.Errorf("%w %q: a byte count is a whole number", ErrBadSize, s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %q is not a number", ErrBadSize, s, num)
	}
	v := math.Floor(f * float64(mul))
	if v >= math.Exp2(64) {
		return 0, fmt.Errorf("%w %q: 2^64 bytes or more", ErrBadSize, s)
	}
	return uint64(v), nil
}

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
