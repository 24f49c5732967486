package workload

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pebble-cuckoo/pebble-cuckoo/bench/internal/progress"
	"github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"
)

// This file is support for other packages' tests (whatif's projection
// test): a shape's databases built as the benchmark builds them, with
// filter plans of the caller's choosing. The benchmark itself does not
// use it.

// ShapeNames returns the names of the benchmark's shapes, in its order.
func ShapeNames() []string {
	names := make([]string, len(allShapes))
	for i, s := range allShapes {
		names[i] = s.Name
	}
	return names
}

// Shape is one of the benchmark's shapes laid out once, from which Build
// makes databases with identical LSMs (the same levels, L0 sublevels, table
// bounds and entries), only their filters differing. Only NewShape makes
// one. Build must not run concurrently with another Build of the same
// Shape; Options, Comparer and AbsentKey may run concurrently with
// anything.
type Shape struct {
	r     *runner
	spec  shapeSpec
	base  string
	lay   layout
	first *dbInst
}

// NewShape lays out the shape called name under dir (a new or empty
// directory, which it keeps its files in until the caller removes it) as
// the benchmark does with cfg's Keys, FlushEvery, BurstTables,
// LBaseMaxBytes, FileSize and Seed: every shape but deep loaded organically
// into a database without filters whose tables give the layout, deep's
// layout synthetic. Like the benchmark, it then builds a database without
// filters from the layout, where ingestion puts each table, against which
// every database Build makes is checked.
func NewShape(cfg Config, name, dir string) (*Shape, error) {
	var spec *shapeSpec
	for i := range allShapes {
		if allShapes[i].Name == name {
			spec = &allShapes[i]
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("workload: no shape %q", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Shape{r: &runner{cfg: cfg, prog: progress.New(nil), res: &Result{}}, spec: *spec, base: dir}
	lay, _, err := s.r.reference(s.spec, dir)
	if err != nil {
		return nil, fmt.Errorf("shape %s: reference: %w", name, err)
	}
	s.first = &dbInst{cfg: policyCfg{Name: "none", Family: famNone}, dir: filepath.Join(dir, "none"), st: &ioStats{}}
	if s.lay, err = s.r.build(s.spec, lay, []*dbInst{s.first}, nil); err != nil {
		return nil, fmt.Errorf("shape %s: %w", name, err)
	}
	if err := checkDeep(s.spec, s.lay.summary()); err != nil {
		return nil, fmt.Errorf("shape %s: %w", name, err)
	}
	return s, nil
}

// Build makes a database of the shape whose levels write their filters
// with p, in a directory of its own named after name (under the shape's
// directory, apart from the databases NewShape keeps there), and returns
// the directory. It returns an error if the database's LSM is not the shape's.
func (s *Shape) Build(name string, p plan.Plan) (string, error) {
	d := &dbInst{cfg: s.cfg(name, p), dir: filepath.Join(s.base, "built", sanitize(name)), st: &ioStats{}}
	if _, err := s.r.build(s.spec, s.lay, []*dbInst{d}, s.first); err != nil {
		return "", fmt.Errorf("shape %s: %w", s.spec.Name, err)
	}
	return d.dir, nil
}

// Options returns the options the benchmark opens a database of the shape
// with, its levels' filters p (plan.Apply), automatic compactions off.
func (s *Shape) Options(p plan.Plan) *pebble.Options {
	return s.r.options(s.spec, s.cfg("", p), &ioStats{}, nil, true)
}

func (s *Shape) cfg(name string, p plan.Plan) policyCfg {
	return policyCfg{Name: name, Family: famPlan, Plan: &p}
}

// Comparer is the name of the shape's comparer as whatif takes it:
// "cockroach" for the MVCC shape, "default" for the others.
func (s *Shape) Comparer() string {
	if s.spec.mvcc() {
		return "cockroach"
	}
	return "default"
}

// AbsentKey appends to dst the key of the benchmark's j-th absent Get (its
// get-absent path): a key of the shape's key space that no table holds.
func (s *Shape) AbsentKey(dst []byte, j int) []byte {
	k, _, _, _ := s.r.opKey(s.spec, pathSpec{Name: "get-absent"}, j, dst)
	return k
}
