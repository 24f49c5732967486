package main

import (
	"errors"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"0", 0},
		{"1", 1},
		{"1048576", 1 << 20},
		{"512B", 512},
		{"64KiB", 64 << 10},
		{"64MiB", 64 << 20},
		{"64 MiB", 64 << 20},
		{" 64mib ", 64 << 20},
		{"2GiB", 2 << 30},
		{"1TiB", 1 << 40},
		{"64KB", 64000},
		{"500MB", 500e6},
		{"500mb", 500e6},
		{"3GB", 3e9},
		{"1.5GiB", 3 << 29},
		{"1.5GB", 1.5e9},
		{"0.5KiB", 512},
		{"0.3KiB", 307}, // 307.2 rounds down
		{"18446744073709551615", 1<<64 - 1},
		{"16777215TiB", 16777215 << 40},
	} {
		got, err := parseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"", " ", "MiB", "-1", "+1", "-1MiB", "64XB", "64 M i B", "64MiBs", "1e6", "0x10",
		"1.5", "1.5B", "1..5MiB", ".", ".MiB", "NaN", "inf", "64MiB64",
		"18446744073709551616", // 2^64
		"16777216TiB",          // 2^64
		"99999999999999999999GB",
		"1e400GB",
	} {
		if got, err := parseSize(in); !errors.Is(err, errBadSize) {
			t.Errorf("parseSize(%q) = %d, %v; want errBadSize", in, got, err)
		}
	}
}
