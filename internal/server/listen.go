package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Listen is how feedgen serve listens, whatever it serves: its --addr
// and --log, and where it speaks.
type Listen struct {
	Addr      string    // PORT (127.0.0.1's) or HOST:PORT
	AccessLog string    // a file, "-" for Log, "" for none
	Log       io.Writer // the server's log (Options.Log)
}

// Check refuses an Addr that is neither a port nor host:port with a port
// number, and makes a port alone 127.0.0.1's.
func (l *Listen) Check() error {
	if _, err := strconv.ParseUint(l.Addr, 10, 16); err == nil {
		l.Addr = net.JoinHostPort("127.0.0.1", l.Addr)
	}
	_, port, err := net.SplitHostPort(l.Addr)
	if err == nil {
		if n, perr := strconv.ParseUint(port, 10, 16); perr != nil || (n == 0 && port != "0") {
			err = fmt.Errorf("port %q is not a number from 0 to 65535", port)
		}
	}
	if err != nil {
		return fmt.Errorf("--addr %q: want a port or host:port, e.g. 8080 (127.0.0.1's) or 127.0.0.1:8080 (%v)", l.Addr, err)
	}
	return nil
}

// Serve calls run with the options of a server that listens as l says,
// its access log open, and adds to its error, when the address is
// taken, how to choose another: one mode of feedgen serve.
func (l Listen) Serve(ctx context.Context, run func(context.Context, Options) error) error {
	so := Options{Addr: l.Addr, Log: l.Log}
	f, err := openAccessLog(l.AccessLog, l.Log)
	if err != nil {
		return err
	}
	if f != nil {
		defer f.Close()
		so.AccessLog = f
	}
	return withAddrHint(run(ctx, so))
}

// ServeFolder serves the builds written into the output folder dir
// (feedgen serve --dir).
func ServeFolder(ctx context.Context, l Listen, dir string) error {
	return l.Serve(ctx, func(ctx context.Context, so Options) error {
		so.Source = Folder(dir)
		return withDirHint(Run(ctx, so), dir)
	})
}

// ServeBucket serves the builds published to a bucket (feedgen serve
// --dir s3://...): src is a Bucket, its manifest checked for a new build
// every poll (Options.PollInterval's default when 0).
func ServeBucket(ctx context.Context, l Listen, src Source, poll time.Duration) error {
	return l.Serve(ctx, func(ctx context.Context, so Options) error {
		so.Source, so.PollInterval = src, poll
		return Run(ctx, so)
	})
}

// withAddrHint adds to err, when the address to listen on is taken, how
// to choose another.
func withAddrHint(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "listen" && errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another server listens there; pass --addr with another port (port 0 picks a free one)", err)
	}
	return err
}

// withDirHint adds to err, when the server found no output folder at dir,
// the flag that names another.
func withDirHint(err error, dir string) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%w, or pass --dir", err)
}

// openAccessLog opens the access log named by the --log flag: nil for "",
// stderr for "-", else the file, appended to.
func openAccessLog(name string, stderr io.Writer) (io.WriteCloser, error) {
	switch name {
	case "":
		return nil, nil
	case "-":
		return nopCloser{stderr}, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening access log: %w", err)
	}
	return f, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
