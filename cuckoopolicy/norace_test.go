//go:build !race

package cuckoopolicy

const raceEnabled = false
