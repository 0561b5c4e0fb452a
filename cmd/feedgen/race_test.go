//go:build race

package main

// raceEnabled says whether this test binary was built with -race.
const raceEnabled = true
