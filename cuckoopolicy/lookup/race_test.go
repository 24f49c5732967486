//go:build race

package lookup

// raceEnabled reports a build with the race detector, under which sync.Pool
// drops and withholds items at random: allocation counts measure that, not
// the lookup.
const raceEnabled = true
