//go:build !linux

package build

// writeBehind is not available: the kernel writes pages back in its own
// time (see behind_linux.go).
type writeBehind struct{}

func newWriteBehind(int64) *writeBehind { return nil }

func (w *writeBehind) error() error  { return nil }
func (w *writeBehind) finish() error { return nil }
func (w *writeBehind) close()        {}
