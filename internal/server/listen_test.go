package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestListenCheck(t *testing.T) {
	for _, tc := range []struct{ addr, want, err string }{
		{addr: "8080", want: "127.0.0.1:8080"},
		{addr: "0", want: "127.0.0.1:0"},
		{addr: ":9000", want: ":9000"},
		{addr: "[::1]:80", want: "[::1]:80"},
		{addr: "localhost:http", err: `--addr "localhost:http": want a port or host:port, e.g. 8080 (127.0.0.1's) or 127.0.0.1:8080 (port "http" is not a number from 0 to 65535)`},
		{addr: "70000", err: `--addr "70000": want a port or host:port`},
		{addr: "host", err: `--addr "host": want a port or host:port`},
	} {
		l := Listen{Addr: tc.addr}
		err := l.Check()
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.addr, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.addr, err)
		case l.Addr != tc.want:
			t.Errorf("%q: addr %q, want %q", tc.addr, l.Addr, tc.want)
		}
	}
}

func TestHints(t *testing.T) {
	inUse := fmt.Errorf("listening: %w", &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", syscall.EADDRINUSE)})
	if got := withAddrHint(inUse).Error(); !strings.HasSuffix(got, ": another server listens there; pass --addr with another port (port 0 picks a free one)") {
		t.Errorf("address in use: %q", got)
	}
	other := errors.New("other")
	if got := withAddrHint(other); got != other {
		t.Errorf("other error: %v", got)
	}
	gone := filepath.Join(t.TempDir(), "public")
	notThere := fmt.Errorf("no build: %w", os.ErrNotExist)
	if got := withDirHint(notThere, gone).Error(); got != "no build: file does not exist, or pass --dir" {
		t.Errorf("no folder: %q", got)
	}
	if got := withDirHint(notThere, t.TempDir()); got != notThere {
		t.Errorf("a folder without a build: %v", got)
	}
}
