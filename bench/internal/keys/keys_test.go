package keys

import (
	"fmt"
	"strings"
	"testing"
)

// TestShapes checks that every shape gives distinct keys of the common
// width, and that a format of another width is an error.
func TestShapes(t *testing.T) {
	for _, s := range Shapes {
		ks, err := s.Set(1000, 500)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i := range ks.Len() {
			k := string(ks.At(i))
			if len(k) != ShortLen || seen[k] || k != fmt.Sprintf(s.Format, 1000+i) {
				t.Fatalf("%s: key %d is %q", s.Name, i, k)
			}
			seen[k] = true
		}
	}
	if _, err := (Shape{Format: "k%d"}).Set(0, 10); err == nil {
		t.Error("a format of another width gave no error")
	}
}

func TestKeys(t *testing.T) {
	g := Gen{Seed: 5, Width: LongLen}
	s := g.Set(3, 10)
	if s.Len() != 10 || string(s.At(2)) != string(g.Key(5)) {
		t.Fatal("Set and Key disagree")
	}
	if !strings.HasPrefix(string(g.Key(0)), string(longPrefix)) {
		t.Error("long keys lack the prefix")
	}
	q, pos := Mixed(Gen{Seed: 1, Width: 16}, 100, Gen{Seed: 2, Width: 16}, 1000, 0.25, 3)
	if q.Len() != 1000 || pos != 250 {
		t.Fatalf("Mixed: %d queries, %d positive", q.Len(), pos)
	}
}
