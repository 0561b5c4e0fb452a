// Package folder tells how two folders on disk lie: one and the same,
// one inside the other, or apart; whatever names they are given
// (relative, with symbolic links, with a trailing slash, through a bind
// mount or any other alias the file system makes). A build refuses an
// output folder that shares files with its content folder, and a publish
// a bucket folder that shares files with the build it publishes.
package folder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// Verb returns how a message says r: "is", "lies inside", "holds"; ""
// for Apart.
func (r Relation) Verb() string {
	return [...]string{Apart: "", Same: "is", Inside: "lies inside", Holds: "holds"}[r]
}

// Relate returns how folder a lies to folder b, as the file system says:
// the folders (or, for one that does not exist yet, the nearest folder
// above it that does) and each of their parents are compared by identity
// (device and inode; on Windows, volume and file index), not by name. A
// folder mounted a second time elsewhere (mount --bind), or named in
// another case on a file system that ignores case, is the folder it
// shows. Symbolic links are followed as far as the folders exist. To
// relate many folders to one, a Locator reads the mount table once.
func Relate(a, b string) (Relation, error) {
	l, err := NewLocator(b)
	if err != nil {
		return Apart, err
	}
	return l.Relate(a)
}

// A Locator relates folders to one folder, its target, as Relate does:
// it reads the mount table and locates its target once, so that each
// folder then costs the stat calls of its own path and parents. The
// mounts made or removed after NewLocator are not seen.
type Locator struct {
	mounts []mount
	to     place
	none   bool // no target: every folder is apart from it
}

// NewLocator returns a Locator of the folder b; with b "", of no folder:
// its places are found, and all apart.
func NewLocator(b string) (*Locator, error) {
	return newLocator(b, mountTable)
}

// newLocator is NewLocator with the mount table read by table.
func newLocator(b string, table func() []mount) (*Locator, error) {
	l := &Locator{mounts: table(), none: b == ""}
	if l.none {
		return l, nil
	}
	to, err := locate(b, l.mounts)
	if err != nil {
		return nil, err
	}
	l.to = to
	return l, nil
}

// Relate returns how folder a lies to the Locator's folder (see Relate).
func (l *Locator) Relate(a string) (Relation, error) {
	pa, err := l.Locate(a)
	if err != nil {
		return Apart, err
	}
	return l.RelatePlace(pa), nil
}

// MountsInside returns the folders where a file system, or a folder of
// one, is mounted (mount --bind) inside the Locator's folder, by their
// paths: a folder there may also be seen elsewhere, under a name that
// Relate cannot tie to the Locator's folder, since its parents there are
// others. Relate each to find such a folder (see Relate).
func (l *Locator) MountsInside() []string {
	if l.none {
		return nil
	}
	var out []string
	for _, m := range l.mounts {
		if within(m.point, l.to.real) && !slices.Contains(out, m.point) {
			out = append(out, m.point)
		}
	}
	return out
}

// Shares returns how folder a lies to the Locator's folder when they
// share files, as Relate does, and also through a folder mounted inside
// the Locator's folder (see MountsInside) that a is, lies inside or
// holds under another name: then rel is a's relation to that folder, and
// mount its path. rel is Apart, mount "", when they share nothing.
// Every check of two folders that must not share files asks it.
func (l *Locator) Shares(a string) (rel Relation, mount string, err error) {
	rel, err = l.Relate(a)
	if err != nil || rel != Apart {
		return rel, "", err
	}
	for _, m := range l.MountsInside() {
		r, err := Relate(a, m)
		if err != nil {
			return Apart, "", err
		}
		if r != Apart {
			return r, m, nil
		}
	}
	return Apart, "", nil
}

// A Place is where a folder is, as a Locator found it: its real path and
// the identities of it and its parents.
type Place struct{ pl place }

// Real returns the real path of the folder (see Real).
func (p Place) Real() string { return p.pl.real }

// Locate returns the place of folder a, which RelatePlace relates to the
// Locator's folder, and Child extends to the folders in it.
func (l *Locator) Locate(a string) (Place, error) {
	pa, err := locate(a, l.mounts)
	return Place{pa}, err
}

// Child returns the place of the folder name in the folder that exists
// at parent, when it is a folder (not a link to one, which Locate
// follows): its parents are parent's, so that it costs a stat call, but
// where a folder is mounted (mount --bind). ok is false when it is not
// a folder, or no longer there.
func (l *Locator) Child(parent Place, name string) (Place, bool) {
	p := filepath.Join(parent.pl.real, name)
	if len(parent.pl.tail) > 0 {
		return Place{}, false
	}
	if otherName(l.mounts, p) != "" {
		pl, err := locate(p, l.mounts)
		return Place{pl}, err == nil && len(pl.tail) == 0
	}
	info, err := os.Lstat(p)
	if err != nil || !info.IsDir() {
		return Place{}, false
	}
	chain := make([]fs.FileInfo, 0, 1+len(parent.pl.chain))
	return Place{place{real: p, chain: append(append(chain, info), parent.pl.chain...)}}, true
}

// RelatePlace returns how the folder at pa lies to the Locator's folder.
func (l *Locator) RelatePlace(pa Place) Relation {
	if l.none {
		return Apart
	}
	pb := l.to
	if r := byName(pa.pl.real, pb.real); r != Apart {
		return r
	}
	switch {
	case pa.pl.same(pb):
		return Same
	case pa.pl.within(pb):
		return Inside
	case pb.within(pa.pl):
		return Holds
	}
	return Apart
}

// ByName returns how folder a lies to folder b by their real paths (see
// Real) alone: where it differs from Relate, the folders are one, or one
// holds the other, under names that do not show it (a bind mount, say),
// which a message should say.
func ByName(a, b string) (Relation, error) {
	ra, err := Real(a)
	if err != nil {
		return Apart, err
	}
	rb, err := Real(b)
	if err != nil {
		return Apart, err
	}
	return byName(ra, rb), nil
}

func byName(ra, rb string) Relation {
	switch {
	case ra == rb:
		return Same
	case within(ra, rb):
		return Inside
	case within(rb, ra):
		return Holds
	}
	return Apart
}

// within reports whether path p lies inside folder dir (both clean and
// absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// place is where a folder is: the nearest folder of its path that exists
// (itself, when it does) and that folder's parents, each as the file
// system identifies it, nearest first; and the names below it that do not
// exist yet.
type place struct {
	real  string        // the real path (see Real)
	chain []fs.FileInfo // the folder that exists, then its parents up to the root; nil entries could not be read
	tail  []string      // the names after chain[0] that do not exist
}

// locate returns the place of folder p, with the mount table mounts.
// Where a folder of the chain is a folder mounted a second time (mount
// --bind), the parents it has on its file system follow its parents by
// path: both hold it.
func locate(p string, mounts []mount) (place, error) {
	head, tail, err := resolve(p)
	if err != nil {
		return place{}, err
	}
	pl := place{real: filepath.Join(append([]string{head}, tail...)...), tail: tail}
	todo, seen := []string{head}, map[string]bool{}
	for len(todo) > 0 && len(seen) < 64 {
		d := todo[0]
		todo = todo[1:]
		for !seen[d] {
			seen[d] = true
			info, err := os.Stat(d)
			if err != nil {
				info = nil // unknown: matches nothing
			}
			pl.chain = append(pl.chain, info)
			if other := otherName(mounts, d); other != "" {
				todo = append(todo, other)
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return pl, nil
}

// same reports whether pl and o are one folder: the same folder that
// exists, and the same names below it.
func (pl place) same(o place) bool {
	return sameFile(pl.chain[0], o.chain[0]) && slices.Equal(pl.tail, o.tail)
}

// within reports whether pl lies inside o: o's folder is among pl's
// folder and its parents (o exists), or both are below one existing
// folder, pl's names after o's (o does not exist yet).
func (pl place) within(o place) bool {
	if len(o.tail) > 0 {
		n := len(o.tail)
		return sameFile(pl.chain[0], o.chain[0]) && len(pl.tail) > n && slices.Equal(pl.tail[:n], o.tail)
	}
	chain := pl.chain
	if len(pl.tail) == 0 {
		chain = chain[1:] // pl's own folder: one folder, not inside
	}
	for _, info := range chain {
		if sameFile(info, o.chain[0]) {
			return true
		}
	}
	return false
}

func sameFile(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b)
}

// Real returns p absolute, with the symbolic links of the part of it that
// exists resolved, as the kernel resolves them: in "x/../y" a link x is
// followed before "..", so the result is where a file "x/../y/f" would
// go, not where the text "y/f" says. Two names of one folder give one
// path, but for names only the file system knows to be one (see Relate).
func Real(p string) (string, error) {
	head, tail, err := resolve(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{head}, tail...)...), nil
}

// resolve returns p absolute, split into the longest part of it that
// exists, resolved (see Real), and the names after it, cleaned.
func resolve(p string) (head string, tail []string, err error) {
	if !filepath.IsAbs(p) {
		cwd, err := os.Getwd()
		if err != nil {
			return "", nil, err
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
			return below(real, elems[n:])
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", nil, err // a loop of links, a folder that cannot be read
		}
	}
	return below(vol+string(filepath.Separator), elems[1:])
}

// below returns the names rest after the folder head, cleaned as
// filepath.Join cleans them. When a ".." climbs above head (a name after
// a folder that does not exist, then "..", then more), the path is
// resolved again from the top: it has no ".." left.
func below(head string, rest []string) (string, []string, error) {
	joined := filepath.Join(append([]string{head}, rest...)...)
	rel, err := filepath.Rel(head, joined)
	switch {
	case err != nil:
		return "", nil, err
	case rel == ".":
		return head, nil, nil
	case !filepath.IsLocal(rel):
		return resolve(joined)
	}
	return head, strings.Split(rel, string(filepath.Separator)), nil
}
