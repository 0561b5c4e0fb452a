//go:build !unix

package bench

import "os"

// peakRSS returns 0: this system does not report the peak resident set size
// of a child process.
func peakRSS(*os.ProcessState) int64 { return 0 }
