//go:build !unix

package outdir

import (
	"context"
	"io"
)

// Lock does nothing where flock is not available: two builds of the same
// output folder must not be started at once there.
func Lock(ctx context.Context, dir string, waiting io.Writer) (func(), error) {
	return func() {}, ctx.Err()
}

// Hold does nothing where flock is not available: two feedgen rules of
// the same site must not be run at once there.
func Hold(dir string) (func(), error) {
	return func() {}, nil
}

// Busy cannot tell where flock is not available (a build takes no lock
// there): a build may be running.
func Busy(dir string) bool { return true }
