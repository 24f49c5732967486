package workload

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// loadRun is one database's organic load in one lockstep round.
type loadRun struct {
	Round     int
	Policy    string
	Wall, CPU time.Duration // of the database's own turns
	Written   uint64        // sstable bytes its flushes and compactions wrote
	Tables    [7]int64
}

// cpuPerByte is the load's CPU time per sstable byte written: flushes and
// compactions write more or less from one load to the next.
func (l loadRun) cpuPerByte() float64 {
	if l.Written == 0 {
		return math.NaN()
	}
	return float64(l.CPU) / float64(l.Written)
}

// loadMetric is one measure of a load.
type loadMetric struct {
	Name string
	Of   func(loadRun) float64
}

var loadMetrics = []loadMetric{
	{"wall time", func(l loadRun) float64 { return float64(l.Wall) }},
	{"CPU time", func(l loadRun) float64 { return float64(l.CPU) }},
	{"CPU time per byte written", loadRun.cpuPerByte},
}

// measuresLoading says whether the run measures loading on shape s: not on
// deep, whose layout is synthetic.
func (r *runner) measuresLoading(s shapeSpec) bool {
	return !s.Deep && r.cfg.LoadRounds > 0 && (len(r.cfg.LoadShapes) == 0 || slices.Contains(r.cfg.LoadShapes, s.Name))
}

// loading loads bloom(B) and cuckoo(B) for every budget, LoadRounds times,
// each round a new database per policy, all loaded in lockstep (the order
// rotated by one each round), and removes them.
func (r *runner) loading(s shapeSpec, base string) ([]loadRun, error) {
	var cfgs []policyCfg
	for _, b := range r.cfg.Budgets {
		cfgs = append(cfgs, policyCfg{Name: bloomName(b), Family: famBloom, B: b}, policyCfg{Name: cuckooName(b), Family: famCuckoo, B: b})
	}
	var runs []loadRun
	for round := range r.cfg.LoadRounds {
		dir := filepath.Join(base, fmt.Sprintf("load-%d", round))
		var orgs []*organic
		for _, c := range cfgs {
			orgs = append(orgs, &organic{cfg: c, dir: filepath.Join(dir, sanitize(c.Name)), st: &ioStats{}})
		}
		r.prog.Stage("load %s: round %d/%d, %d databases in lockstep", s.Name, round+1, r.cfg.LoadRounds, len(orgs))
		n := r.entries(s)
		if r.cfg.LoadKeys > 0 {
			n = r.cfg.LoadKeys
			if s.mvcc() {
				n = n / mvccVersions * mvccVersions
			}
		}
		err := r.loadLockstep(s, orgs, round, uint64(n), max(1000, n/10))
		os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", round+1, err)
		}
		for _, o := range orgs {
			runs = append(runs, loadRun{Round: round, Policy: o.cfg.Name, Wall: o.wall, CPU: o.cpu, Written: o.written, Tables: o.shape.Tables})
		}
	}
	return runs, nil
}

// loadRatios returns, for each round of the shape's loads, m(x)/m(base)
// of that round's two loads.
func loadRatios(runs []loadRun, x, base string, m loadMetric) []float64 {
	byRound := map[int][2]float64{}
	for _, l := range runs {
		p := byRound[l.Round]
		switch l.Policy {
		case x:
			p[0] = m.Of(l)
		case base:
			p[1] = m.Of(l)
		default:
			continue
		}
		byRound[l.Round] = p
	}
	var out []float64
	for round := range len(byRound) {
		if p, ok := byRound[round]; ok && p[0] > 0 && p[1] > 0 {
			out = append(out, p[0]/p[1])
		}
	}
	return out
}

// medianRun is the median of m over a policy's loads of a shape.
func medianRun(runs []loadRun, policy string, m loadMetric) float64 {
	var xs []float64
	for _, l := range runs {
		if l.Policy == policy {
			xs = append(xs, m.Of(l))
		}
	}
	return median(xs)
}
