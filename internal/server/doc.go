// Package server answers /articles/?limit=&offset= from the files of a
// build exactly as the original dynamic service answered: the same
// statuses, headers and bodies, byte for byte.
//
// The request never becomes a file path. The server holds the pages of
// one build in memory (a heldBuild), read from the files its manifest
// lists and checked against their sizes and SHA-256 sums. A query is
// parsed into filter parameters, which select a collection (none: the
// main listing), a limit and an offset, which select one of its pages.
// When a new build is written into the folder, the server loads it fully
// and then switches to it at once: no answer ever mixes two builds.
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
//   - held.go: a build held in memory, as a set of collections and their
//     pages.
//   - load.go: loading a build from its manifest and page files.
//   - reload.go: switching to a new build: Reload, Install, and
//     FollowBuilds, which watches the folder.
//   - batch.go: pages handed over in memory by the build (the live preview).
//   - lock_*.go: telling whether a build is writing the folder (New serves
//     a build whose pages do not all match its manifest, in part, once no
//     build is: a page whose file did not match is answered 503).
//   - store*.go: where page bodies are kept, outside the Go heap, and the
//     system call that sends them.
//   - accesslog.go: the access log.
//
// Two rules a change must not break:
//
//  1. Every path that writes a page body keeps the build it took the page
//     from alive until the write has returned (runtime.KeepAlive). The
//     bodies are not Go memory: they live in memory files (memfd) mapped
//     by their stores, and a cleanup unmaps a store once it is
//     unreachable, which can happen as soon as the server has switched to
//     another build. A body written after its build was let go may read
//     memory that is no longer mapped. ServeHTTP and the fast path's
//     answer do this; any new way of sending a page must too.
//  2. The fast path and net/http send the same bytes: for any request
//     the fast path answers, the status line, the header fields and their
//     order, and the body are those net/http writes for ServeHTTP's
//     answer (but for the Date's value). reply.appendHead and
//     Server.writeHeader are the two ways of writing one head and change
//     together. TestFastPathMatchesNetHTTP checks it.
package server
