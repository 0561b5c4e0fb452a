package build

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
)

// finished removes the marker of dir, if there is one, and the temporary
// manifest of a build killed while writing it.
func finished(dir string) error {
	if err := outdir.Unmark(dir); err != nil {
		return err
	}
	removeManifestTemps(dir)
	return nil
}

// removeManifestTemps deletes the temporary files of writes of the
// manifest, the marker and the caches beside them (see inputsName,
// sourcesName) that never finished (see atomicfile): with the folder's
// lock held, no other build is writing one.
func removeManifestTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, ok := tempOf(e.Name()); ok && !e.IsDir() && (target == manifest.Name || target == outdir.Unfinished || target == inputsName || target == sourcesName || target == encodedName) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// hashed reports whether name is a regular file of size bytes whose
// SHA-256 is sum (in hex), and returns its stat before it was read (nil
// when it could not be opened). Any other file is not opened (see
// outfile).
func hashed(name string, size int64, sum string) (fs.FileInfo, bool) {
	f, err := outfile.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() != size {
		return nil, false
	}
	h := sha256.New()
	if n, err := io.Copy(h, f); err != nil || n != size {
		return info, false
	}
	return info, hex.EncodeToString(h.Sum(nil)) == sum
}
