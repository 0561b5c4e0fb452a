package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/folder"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// rootNames are the files of a bucket on disk, outside articles/, that a
// publish opens: its driver (gocloud.dev/blob/fileblob) opens
// manifest.json and the attribute file beside it blocking, and the lock
// is read from the file LockName.
var rootNames = []string{manifest.Name, manifest.Name + attrsExt, LockName}

// checkFolderRoot refuses a bucket on disk (file://, in folder dir) whose
// manifest.json, attribute file of it, or lock file is there and is not
// a regular file (nor a folder): the driver opens them blocking, so that
// a named pipe would block the publish in open, deaf to SIGINT and
// SIGTERM; and a link is never followed (os.Lstat): the bucket's
// manifest.json as a link to the build's own would be read as the
// bucket's, so that publish would find every build already there and
// never upload again, and every build would change what the bucket says
// before a page of it is there. Nothing else of the folder is looked at:
// what is under articles/ is listed by walk (a file that is not a
// regular one is replaced or deleted, never read), and the rest is never
// touched. "" is no folder: nothing to check.
func checkFolderRoot(dir string) error {
	if dir == "" {
		return nil
	}
	for _, name := range rootNames {
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil || info.Mode().IsRegular() || info.IsDir() {
			continue // missing: the driver says what else is wrong
		}
		kind := outfile.Kind(info.Mode().Type())
		if info.Mode()&fs.ModeSymlink != 0 {
			kind = "a symbolic link"
			if to, err := os.Readlink(p); err == nil {
				kind = "a symbolic link to " + to + ", which publish does not follow"
			}
		}
		return fmt.Errorf("%s is not a regular file (%s): a bucket folder holds only the files of a build; remove it and publish again", p, kind)
	}
	// articles must be a folder (or a link to one), or nothing yet: a
	// file there fails every upload.
	p := filepath.Join(dir, listing.Dir)
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(p); lerr == nil {
			return fmt.Errorf("%s is a link to nothing: the pages of a bucket folder go in the folder articles; remove it and publish again", p)
		}
	} else if err == nil && !info.IsDir() {
		return fmt.Errorf("%s is not a folder (%s): the pages of a bucket folder go in the folder articles; remove it and publish again", p, outfile.Kind(info.Mode().Type()))
	}
	return nil
}

// folderWalk is what the walk of a bucket on disk found besides its
// files: how each folder under articles/ lies to the build, and the
// attribute files to drop.
type folderWalk struct {
	// rel is how each folder (by key: "articles", "articles/x") lies to
	// the build (see folder.Relate); a folder that is not Apart is not
	// walked.
	rel map[string]folder.Relation
	// attrs are the attribute files (*.attrs) beside regular files: an
	// earlier publish's (see dropAttrs).
	attrs []string
	// real names the key of each folder walked, by real path: one
	// reached twice (a link to another of its folders) is refused.
	real map[string]string
}

// walk lists the files under the folder prefix (ending in "/") of a
// bucket on disk, calling saw with each key and its size, in one walk of
// the disk rather than one per thousand keys, and without fileblob's
// look into an attribute file beside each: a file that is not a regular
// one (a link to a file, a pipe, a socket), or whose attribute file is
// not one, is listed with size -1, so that it is replaced or deleted,
// never read; attribute files (*.attrs) are not listed, but kept for
// dropAttrs. Links to folders are followed, the prefix's own too (a
// folder of a web root on another disk); each folder is related to the
// build as it is reached (p.loc, from its parent's place: a stat call),
// and one that is the build's, holds it or lies in it is not walked:
// checkFolders refuses writing there.
func (p *publisher) walk(ctx context.Context, prefix string, saw func(key string, size int64)) error {
	p.walked = &folderWalk{rel: map[string]folder.Relation{}, real: map[string]string{}}
	key := strings.TrimSuffix(prefix, "/")
	dir := filepath.Join(p.opt.Folder, filepath.FromSlash(key))
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return explainList(err)
	case !info.IsDir():
		return nil // a file: no folder to list
	}
	pl, err := p.loc.Locate(dir)
	if err == nil {
		err = p.walkDir(ctx, key, dir, pl, saw)
	}
	if err != nil && ctx.Err() == nil {
		return explainList(err)
	}
	return err
}

// walkDir walks the folder dir of key, at place pl.
func (p *publisher) walkDir(ctx context.Context, key, dir string, pl folder.Place, saw func(key string, size int64)) error {
	w := p.walked
	rel := p.loc.RelatePlace(pl)
	w.rel[key] = rel
	if rel != folder.Apart {
		return nil
	}
	if other, ok := w.real[pl.Real()]; ok {
		return fmt.Errorf("%s in the bucket %s is %s again (through a link): publishing would write each of its files twice; remove the link, and publish again", key, p.opt.Folder, other)
	}
	w.real[pl.Real()] = key
	if err := ctx.Err(); err != nil {
		return err
	}
	p.step(ctx, "read "+key)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	// The type of each name, so that an object and its attribute file
	// are seen together.
	types := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		types[e.Name()] = e.Type()
	}
	for _, e := range entries {
		name := e.Name()
		full, k := filepath.Join(dir, name), key+"/"+name
		t := e.Type()
		switch {
		case t.IsDir():
			cpl, ok := p.loc.Child(pl, name)
			if !ok {
				continue // removed meanwhile
			}
			if err := p.walkDir(ctx, k, full, cpl, saw); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			if info, err := os.Stat(full); err == nil && info.IsDir() {
				cpl, err := p.loc.Locate(full)
				if err != nil {
					return err
				}
				if err := p.walkDir(ctx, k, full, cpl, saw); err != nil {
					return err
				}
				continue
			}
			saw(k, -1) // a link to a file, or a broken one
		case strings.HasSuffix(name, attrsExt):
			if ot, ok := types[strings.TrimSuffix(name, attrsExt)]; ok && t.IsRegular() && ot.IsRegular() {
				w.attrs = append(w.attrs, full)
			}
		case !t.IsRegular():
			saw(k, -1) // a pipe, a socket, a device
		default:
			if at, ok := types[name+attrsExt]; ok && !at.IsRegular() {
				saw(k, -1) // the driver would open its attribute file
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile
			}
			if err != nil {
				return err
			}
			saw(k, info.Size())
		}
	}
	return nil
}

// regularObject refuses to read the object key of a bucket on disk that
// is not a regular file, or whose attribute file is there and is not one:
// the driver opens both blocking.
func (p *publisher) regularObject(key string) error {
	name := filepath.Join(p.opt.Folder, filepath.FromSlash(key))
	for _, n := range []string{name, name + attrsExt} {
		info, err := os.Stat(n)
		if err != nil && n != name {
			continue
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s)", n, outfile.Kind(info.Mode().Type()))
		}
	}
	return nil
}

// folderOf says how the folder d (a key's, "articles/x") of the bucket
// lies to the build: as the walk found it, or, for one that was not
// there, as the folder it is made in (a folder a publish makes in a
// folder apart from the build is apart from it). Without a walk (nothing
// listed), as p.loc finds it.
func (p *publisher) folderOf(d string, made map[string]bool) (folder.Relation, error) {
	if w := p.walked; w != nil {
		if rel, ok := w.rel[d]; ok {
			return rel, nil
		}
		if up := path.Dir(d); up == "." || made[up] || w.rel[up] == folder.Apart && hasKey(w.rel, up) {
			made[d] = true
			return folder.Apart, nil
		}
	}
	return p.loc.Relate(filepath.Join(p.opt.Folder, filepath.FromSlash(d)))
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}
