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
// The bodies of a build in a folder (Options.Dir) are not held: the
// build records the identity of each page file (device, inode, size,
// modification time) when it reads and checks it, and an answer sends the
// body from that very inode, mapped or through a descriptor (see
// files.go). Pages are replaced by rename, never changed in place, so the
// inode is the build's bytes for as long as it exists. The bodies of any
// other build (Options.FS, such as a bundle; the preview's builds, handed
// over in memory) are held in memory, outside the Go heap.
//
// The files, one job each:
//
//   - server.go: Options, New and the Server.
//   - answer.go: deciding the answer to a request (decide), and sending it
//     through net/http (ServeHTTP); the head of an answer, both ways.
//   - fast.go: the fast path, which reads the usual requests and sends
//     their answers itself, beside net/http.
//   - serve.go: Run and Serve: listening, handing connections to the fast
//     path or net/http, shutting down.
//   - held.go: a build, as a set of collections and their pages.
//   - load.go: loading a build from its manifest and page files.
//   - files*.go: page files: their records, the output folder, the
//     mappings and the cache of open descriptors the bodies are sent from,
//     and waiting for a newer build when a file was replaced.
//   - reload.go: switching to a new build: Reload, Install, and
//     FollowBuilds, which watches the folder.
//   - batch.go: pages handed over in memory by the build (the live preview),
//     or by whoever opened the build (NewPages, Options.Pages).
//   - lock_*.go: telling whether a build is writing the folder (New serves
//     a build whose pages do not all match its manifest, in part, once no
//     build is: a page whose file did not match is answered 503).
//   - store*.go: where page bodies held in memory are kept, outside the
//     Go heap, and the system calls that read requests and send answers
//     (a body spliced is sent by reference to its memory, which must
//     never change: see sender.splice).
//   - accesslog.go: the access log.
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
//     release.)
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
package server
