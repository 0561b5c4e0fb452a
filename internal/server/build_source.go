package server

import (
	"io/fs"

	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// A Source is where a server's builds come from, one of four: Folder,
// Archive, Pushed or Bucket. It is the one way to give a server its
// builds.
type Source struct {
	kind      sourceKind
	dir       string       // Folder, Pushed: the output folder ("" for none); Archive, Bucket: its name
	fsys      fs.FS        // Archive
	pages     *Batch       // Archive: bodies at hand, used once
	bucket    *blob.Bucket // Bucket
	cacheSize int64        // Bucket: the bytes of bodies kept in memory
}

type sourceKind uint8

const (
	fromFolder sourceKind = iota + 1
	fromArchive
	fromPushes
	fromBucket
)

// Folder is the build in the output folder dir, and each build written
// there after it (see Server.FollowBuilds). On Linux the page bodies are
// sent from their files; elsewhere they are held in memory.
func Folder(dir string) Source { return Source{kind: fromFolder, dir: dir} }

// Archive is the one build held in fsys, such as a bundle, named name in
// messages: loaded once, never followed, its page bodies held in memory.
// pages, when not nil (see NewPages), holds bodies of it at hand, which are
// not read from fsys again.
func Archive(name string, fsys fs.FS, pages *Batch) Source {
	return Source{kind: fromArchive, dir: name, fsys: fsys, pages: pages}
}

// Pushed is builds handed over by the process that makes them, with
// Server.Install (the live preview): New loads none and switches are not
// logged (the caller reports its builds). dir, when not "", is the folder
// the builds are written to, read for the pages a Handover lacks.
func Pushed(dir string) Source { return Source{kind: fromPushes, dir: dir} }

// Bucket is the build published to bucket b (feedgen publish), named
// name in messages, and each build published there after it (see
// Server.FollowBuilds): its manifest and indexes are read when it is
// loaded, its bodies when a request needs them, at most cacheSize bytes
// of them kept in memory (DefaultCacheSize when 0). See build_remote.go.
func Bucket(name string, b *blob.Bucket, cacheSize int64) Source {
	return Source{kind: fromBucket, dir: name, bucket: b, cacheSize: cacheSize}
}

// String names the source in messages: its folder or archive.
func (src Source) String() string { return src.dir }

// folder returns the output folder the builds are read from, "" for none.
func (src Source) folder() string {
	if src.kind == fromArchive || src.kind == fromBucket {
		return ""
	}
	return src.dir
}

// A Handover is a build handed to the server by the process that made it
// (see Pushed): its manifest, as a value and as written, and the bodies of
// its pages that are not those of the build being served. The server
// takes it as it is: it was made here, not read from a file anyone could
// have written, so the manifest is not checked again.
type Handover struct {
	Manifest *manifest.Manifest
	Data     []byte // the manifest as written
	Pages    *Batch
}
