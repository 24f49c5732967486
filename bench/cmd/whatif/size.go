package main

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// errBadSize reports a size parseSize cannot read.
var errBadSize = errors.New("whatif: bad size")

// sizeUnits are the units parseSize knows, by lower-case name: powers of
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

// parseSize reads a size in bytes: a number, optionally followed (spaces
// allowed between) by a unit, case-insensitive: B, KiB, MiB, GiB, TiB
// (powers of 1024) or KB, MB, GB, TB (powers of 1000). "64MiB" is 67108864,
// "1.5GB" 1500000000. A fraction is allowed with a unit and rounds down to a
// whole byte; a plain byte count is a whole number. It returns an error
// wrapping errBadSize for anything else: no number, a sign, an unknown unit,
// a size of 2^64 bytes or more. Zero is a size: callers that need more say so.
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mul, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%w %q: want a number of bytes, optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), as in 64MiB", errBadSize, s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		hi, v := bits.Mul64(n, mul)
		if err != nil || hi != 0 {
			return 0, fmt.Errorf("%w %q: 2^64 bytes or more", errBadSize, s)
		}
		return v, nil
	}
	if unit == "" || unit == "b" {
		return 0, fmt.Errorf("%w %q: a byte count is a whole number", errBadSize, s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %q is not a number", errBadSize, s, num)
	}
	v := math.Floor(f * float64(mul))
	if v >= math.Exp2(64) {
		return 0, fmt.Errorf("%w %q: 2^64 bytes or more", errBadSize, s)
	}
	return uint64(v), nil
}
