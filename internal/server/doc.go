// Package server answers /articles/?limit=&offset= from the files of a
// build exactly as the original dynamic service answered: the same
// statuses, headers and bodies, byte for byte.
//
// The request never becomes a file path. The server holds what answering
// needs of one build (a heldBuild): its collections, counts, and for each
// page its size, ETag and where its body is, all read from the build's
// manifest and files, each file checked against its size and SHA-256. A
// query is parsed into filter parameters, which select a collection
// (none: the main listing), a limit and an offset, which select one of
// its pages. When a new build is written into the folder, the server
// loads it fully and then switches to it at once: no answer ever mixes
// two builds.
//
// The bodies of a build in a folder (Folder) are not held: the build
// records the identity of each page file (device, inode, size,
// modification time) when it reads and checks it, and an answer sends the
// body from that very inode, mapped or through a descriptor (see
// body_files.go). Pages are replaced by rename, never changed in place, so
// the inode is the build's bytes for as long as it exists. The bodies of
// any other build (Archive, such as a bundle; Pushed, the preview's
// builds handed over in memory) are held in memory, outside the Go heap.
// The bodies of a build in a bucket (Bucket) are read from the bucket when
// a request needs them, checked then, and kept in a cache of bounded size
// (see build_remote.go).
//
// The files, by job (their names start with it):
//
//   - server.go: Options, New and the Server.
//   - decide.go: deciding the answer to a request (decide), as a reply
//     value that either transport sends.
//   - transport*.go: sending replies. transport.go: Run and Serve,
//     listening and handing each connection to the fast path or net/http,
//     shutting down; transport_loading.go: listening before the first
//     build is loaded, answering 503 meanwhile; transport_fast.go: the
//     fast path, which reads the usual requests and writes their answers
//     itself (its system calls are in the package socket); transport_http.go: the same answers
//     through net/http (ServeHTTP); transport_accesslog.go: the access
//     log.
//   - build_*.go: the builds served. build_source.go: where they come
//     from (Folder, Archive, Pushed, Bucket, a Handover); build_held.go: a
//     build as a set of collections and their pages; build_layouts.go: the
//     server's loader of each layout (layout.Layouts) and loadBuild;
//     build_load.go: loading a build of pages from its manifest and page
//     files; build_chunks.go: of chunks, and assembling its pages;
//     build_feeds.go: its reader feeds; build_remote.go: reading a build's
//     files from a bucket, and the cache of its bodies; build_follow.go:
//     switching to a new one (Reload, Install, FollowBuilds, of a folder
//     or a bucket); build_batch.go: bodies handed over in memory. New
//     serves a build whose pages do not all match its manifest, in part,
//     once no build is writing the folder (internal/outdir's Busy tells):
//     a page whose file did not match is answered 503.
//   - body_*.go: where page bodies are. body_store*.go: in memory,
//     outside the Go heap; body_files*.go: page files, their records, the
//     mappings and the cache of open descriptors the bodies are sent
//     from, and waiting for a newer build when a file was replaced.
//
// Three rules a change must not break:
//
//  1. Every path that writes a page body keeps the build it took the page
//     from alive until the write has returned (runtime.KeepAlive). The
//     bodies are not Go memory: they live in memory files (memfd) mapped
//     by their stores, or in mappings of page files, and a cleanup unmaps
//     them once unreachable, which can happen as soon as the server has
//     switched to another build. A body written after its build was let
//     go may read memory that is no longer mapped. ServeHTTP and the fast
//     path's answer do this; any new way of sending a page must too. (A
//     descriptor of a page file is reference-counted instead: acquire and
//     release; so is a body read from a bucket, held by the reply that
//     sends it and let go of once written: reply.release and
//     assembled.clearParts, which both transports call after the write.)
//  2. The fast path and net/http send the same bytes: for any request
//     the fast path answers, the status line, the header fields and their
//     order, and the body are those net/http writes for ServeHTTP's
//     answer (but for the Date's value). reply.appendHead and
//     Server.writeHeader are the two ways of writing one head and change
//     together. TestFastPathMatchesNetHTTP checks it.
//  3. An answer's head and body come from one build. A page file is sent
//     only from the inode its build recorded (a mapping or a descriptor
//     made from a file whose identity was compared with the record); when
//     the file at the page's path is another, the request is decided
//     again, whole, from the build the server switches to (Server.openBody).
//     A body read from a bucket is sent only once checked against the
//     manifest of the build that decided the answer; one that does not
//     match, the same (Server.remoteFailed).
package server
