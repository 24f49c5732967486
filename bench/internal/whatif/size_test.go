package whatif

import "testing"

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{1, "1 byte"},
		{1000, "1000 bytes"},
		{1 << 10, "1 KiB"},
		{64 << 20, "64 MiB"},
		{1536, "1.50 KiB (1,536 bytes)"},
		{3 << 40, "3 TiB"},
		{1 << 50, "1024 TiB"},
	} {
		if got := formatSize(c.n); got != c.want {
			t.Errorf("formatSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
