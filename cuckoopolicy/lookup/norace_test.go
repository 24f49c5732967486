//go:build !race

package lookup

const raceEnabled = false
