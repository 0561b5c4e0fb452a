//go:build !unix

package outfile

// Flags are the flags, besides O_RDONLY, of every open of a file of an
// output folder: none here, where a named pipe is not a file of a folder.
const Flags = 0
