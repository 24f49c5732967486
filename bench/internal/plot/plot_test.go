package plot

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestSavePlotDegenerate checks that SavePlot writes a readable PNG, without
// failing or panicking, for the curves a restricted run leaves: none, only
// points a log axis cannot show, NaN and infinite points, and one point.
func TestSavePlotDegenerate(t *testing.T) {
	cases := map[string][]Curve{
		"none":      nil,
		"empty":     {{Name: "a"}},
		"nonpos":    {{Name: "a", XY: plotter.XYs{{X: 10, Y: 0}, {X: 12, Y: -1}}}},
		"notfinite": {{Name: "a", XY: plotter.XYs{{X: 10, Y: math.NaN()}, {X: math.Inf(1), Y: 1}}}},
		"onepoint":  {{Name: "a", XY: plotter.XYs{{X: 10, Y: 0.01}}}},
	}
	dir := t.TempDir()
	for name, curves := range cases {
		for _, logY := range []bool{false, true} {
			file := name + map[bool]string{false: "-lin.png", true: "-log.png"}[logY]
			if err := SavePlot(dir, file, name, "x", "y", logY, curves); err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			f, err := os.Open(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(f); err != nil {
				t.Errorf("%s: not a PNG: %v", file, err)
			}
			f.Close()
		}
	}
}
