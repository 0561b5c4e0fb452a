// Feedbench is the benchmark harness of feedgen, not a part of it: it runs
// the real feedgen binary from outside on synthetic sites from package
// corpus (with nginx and wrk for the serve benchmarks, installed with
// apt-get when missing) and reports timings against the project's targets.
//
// Usage:
//
//	go run ./tools/feedbench build [-feedgen PATH] [-runs 5] [-quick] [-dir DIR]
//
// Run it from the repository; see "feedbench help" for the commands.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
