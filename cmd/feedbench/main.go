// Command feedbench measures feedgen: whole-process build benchmarks.
//
// Usage:
//
//	go run ./cmd/feedbench build [-feedgen PATH] [-runs 5] [-quick] [-dir DIR]
//
// Run it from the repository; see "feedbench help" for the commands.
package main

import (
	"os"

	"github.com/feedgen/feedgen/internal/bench"
)

func main() {
	os.Exit(bench.Main(os.Args[1:], os.Stdout, os.Stderr))
}
