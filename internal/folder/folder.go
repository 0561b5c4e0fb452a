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
// exists resolved: two names of one folder give one path.
func Real(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Lstat(p); serr == nil {
				return "", err // a loop of links, a folder that cannot be read
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
