// Package socket writes the answers of feedgen serve's fast path to a TCP
// connection with the fewest system calls: a head and a body in one
// writev, a body that is a page in memory outside the Go heap spliced
// through a pipe of a pool (Pipes) into the socket, a page file sent with
// sendfile(2). It knows nothing of HTTP or of builds: the server decides
// every byte, then hands head and body to a Sender.
//
// On systems other than Linux a Sender copies, with net.Buffers.
package socket
