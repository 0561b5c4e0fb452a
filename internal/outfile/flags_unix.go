//go:build unix

package outfile

import "syscall"

// Flags are the flags, besides O_RDONLY, of every open of a file of an
// output folder: a named pipe opens at once rather than wait for a
// writer, a terminal does not become the process's.
const Flags = syscall.O_NONBLOCK | syscall.O_NOCTTY
