package main

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// TestRun: at p=1 every call must answer true (no false negatives) for both
// policies, and bad flags are refused.
func TestRun(t *testing.T) {
	for _, pol := range []string{"cuckoo", "bloom"} {
		var out bytes.Buffer
		if err := run([]string{"-policy", pol, "-keys", "1000", "-calls", "5000", "-p", "1"}, &out, io.Discard); err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if want := fmt.Sprintf("1000 keys, %d answered true\n", 5000); !bytes.HasSuffix(out.Bytes(), []byte(want)) {
			t.Errorf("%s: %q, want it to end with %q", pol, out.String(), want)
		}
	}
	for _, args := range [][]string{{"-policy", "xor"}, {"-p", "2"}, {"-keys", "0"}, {"-nosuchflag"}} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) accepted", args)
		}
	}
}
