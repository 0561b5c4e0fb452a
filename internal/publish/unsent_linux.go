package publish

import (
	"crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// unsent returns how many bytes written to the connection c the other
// end has not yet taken (acknowledged): the kernel's SIOCOUTQ of its
// socket. ok is false when it cannot say.
func unsent(c net.Conn) (n int, ok bool) {
	if tc, isTLS := c.(*tls.Conn); isTLS {
		c = tc.NetConn()
	}
	sc, isSys := c.(syscall.Conn)
	if !isSys {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
