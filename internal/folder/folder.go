// Package folder tells how two folders on disk lie: one and the same,
// one inside the other, or apart; whatever names they are given
// (relative, with symbolic links, with a trailing slash). A build refuses
// an output folder that shares files with its content folder, and a
// publish a bucket folder that shares files with the build it publishes.
package folder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A Relation is how folder a lies to folder b.
type Relation int

const (
	Apart  Relation = iota // neither holds the other
	Same                   // one folder
	Inside                 // a lies inside b
	Holds                  // a holds b
)

// Relate returns how folder a lies to folder b. Symbolic links are
// followed as far as the folders exist.
func Relate(a, b string) (Relation, error) {
	ra, err := Real(a)
	if err != nil {
		return Apart, err
	}
	rb, err := Real(b)
	if err != nil {
		return Apart, err
	}
	switch {
	case ra == rb:
		return Same, nil
	case within(ra, rb):
		return Inside, nil
	case within(rb, ra):
		return Holds, nil
	}
	return Apart, nil
}

// within reports whether path p lies inside folder dir (both clean and
// absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// Real returns p absolute, with the symbolic links of the part of it that
// exists resolved, as the kernel resolves them: in "x/../y" a link x is
// followed before "..", so the result is where a file "x/../y/f" would
// go, not where the text "y/f" says. Two names of one folder give one
// path.
func Real(p string) (string, error) {
	if !filepath.IsAbs(p) {
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = cwd + string(filepath.Separator) + p // not Join: it cleans ".." away before the links are read
	}
	// The longest part that exists, element by element, resolved; the
	// rest, which does not exist yet, is then cleaned after it.
	vol := filepath.VolumeName(p)
	elems := strings.Split(p[len(vol):], string(filepath.Separator))
	for n := len(elems); n > 0; n-- {
		head := vol + strings.Join(elems[:n], string(filepath.Separator))
		if head == vol {
			head += string(filepath.Separator)
		}
		real, err := filepath.EvalSymlinks(head)
		if err == nil {
			return filepath.Join(append([]string{real}, elems[n:]...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err // a loop of links, a folder that cannot be read
		}
	}
	return filepath.Clean(p), nil
}
