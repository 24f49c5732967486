package whatif

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// deriveProbes turns the source keys into keys present in no table.
func (a *analysis) deriveProbes(rep *Report) [][]byte {
	present := a.present
	var ps [][]byte
	rep.sources = len(a.sources)
	for _, s := range a.sources {
		body, tail := a.bodyTail(s)
		var found []byte
		if len(body) > 0 {
			for bit := 0; bit < 8 && found == nil; bit++ {
				k := append(bytes.Clone(body), tail...)
				k[len(body)-1] ^= 1 << bit
				if !present(k) {
					found = k
				}
			}
		}
		if found != nil {
			rep.byFlip++
		} else {
			k := append(append(append([]byte(nil), body...), 0), tail...)
			if present(k) {
				rep.noProbe++
				continue
			}
			found = k
			rep.byAppend++
		}
		ps = append(ps, found)
	}
	slices.SortFunc(ps, a.cmp)
	ps = slices.CompactFunc(ps, func(x, y []byte) bool { return bytes.Equal(x, y) })
	rep.probes = len(ps)
	return ps
}

// bodyTail splits a source key into the body whose last byte a probe
// alters and the tail after it: the cockroach comparer's sentinel byte, or
// nothing.
func (a *analysis) bodyTail(s []byte) (body, tail []byte) {
	if a.sentinel && len(s) > 0 && s[len(s)-1] == 0 {
		return s[:len(s)-1], s[len(s)-1:]
	}
	return s, nil
}

// probe runs every probe through the read model.
func (a *analysis) probe(rep *Report, ps [][]byte) {
	for li := 1; li < numLevels; li++ {
		slices.SortFunc(a.tables[li], func(x, y *table) int { return a.cmp(x.smallest, y.smallest) })
	}
	check := func(L *levelRow, t *table, p []byte) {
		if t.cands == nil {
			return // no point keys: no filter and no data block to read
		}
		L.Checks++
		switch {
		case t.now == nil:
			L.NowHits++
		default:
			L.NowFiltered++
			if t.now.MayContain(pebble.TableFilter, t.nowBlock, p) {
				L.NowHits++
				L.NowFalsePos++
			}
		}
		for i, cd := range a.cands {
			if cd.policy.MayContain(pebble.TableFilter, t.cands[i], p) {
				L.Candidates[i].Hits++
			}
		}
		checkProjections(a.plan, t, p)
	}
	for _, p := range ps {
		for _, t := range a.tables[0] {
			if a.cmp(t.smallest, p) <= 0 && a.cmp(p, t.largest) <= 0 {
				check(&rep.levels[0], t, p)
			}
		}
		for li := 1; li < numLevels; li++ {
			ts := a.tables[li]
			i, _ := slices.BinarySearchFunc(ts, p, func(t *table, p []byte) int { return a.cmp(t.largest, p) })
			if i < len(ts) && a.cmp(ts[i].smallest, p) <= 0 {
				check(&rep.levels[li], ts[i], p)
			}
		}
	}
}
