//go:build !unix

package publish

// newFolderLock returns the bucket's lock as an object: without flock, a
// file of the folder cannot be held by a process.
func newFolderLock(p *publisher, _ string, info lockInfo) locker {
	return &objectLock{p: p, info: info}
}
