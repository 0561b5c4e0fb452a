//go:build linux

package socket

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// connected returns the two ends of a TCP connection on the loopback.
func connected(t *testing.T) (client net.Conn, server *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if client, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if server, err = ln.AcceptTCP(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// offHeap returns a copy of data outside the Go heap, read-only, as the
// bodies a Sender is given are (a page in a store, a mapped page file).
func offHeap(t *testing.T, data []byte) []byte {
	t.Helper()
	mem, err := unix.Mmap(-1, 0, len(data), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	copy(mem, data)
	if err := unix.Mprotect(mem, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestSpliceReusesPipes sends answers with bodies to splice: each goes
// through one pipe of the pool, given back empty and taken again by the
// next answer; with splicing off, they are copied.
func TestSpliceReusesPipes(t *testing.T) {
	client, c := connected(t)

	page := bytes.Repeat([]byte("spliced "), 4<<10)
	body := offHeap(t, page)

	var pipes Pipes
	defer pipes.Close()
	snd, err := NewSender(c, &pipes)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	got := make(chan []byte, 1)
	const answers = 5
	go func() {
		client.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(client, answers*int64(len("head\r\n")+len(page))))
		got <- b
	}()
	for i := range answers {
		if i == answers-1 {
			pipes.off.Store(true) // copied
		}
		if err := snd.SendBytes([]byte("head\r\n"), body, true); err != nil {
			t.Fatal(err)
		}
		want.WriteString("head\r\n")
		want.Write(page)
		if n := len(pipes.free); n != 1 {
			t.Fatalf("after answer %d, the pool has %d pipes, want the one every answer used", i, n)
		}
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("got %d bytes, want %d (the heads and pages, in order)", len(b), want.Len())
	}
	if n, err := pipeLen(pipes.free[0]); err != nil || n != 0 {
		t.Errorf("the pipe given back holds %d bytes (%v), want 0", n, err)
	}
}

// pipeLen returns how many bytes pipe p holds (FIONREAD).
func pipeLen(p splicePipe) (int, error) { return unix.IoctlGetInt(p.r, unix.TIOCINQ) }

// TestPipePoolLimit takes every pipe a pool has: past maxPipes, there is
// none (the body is copied), until one is given back.
func TestPipePoolLimit(t *testing.T) {
	var pipes Pipes
	var taken []splicePipe
	for range maxPipes {
		p, ok := pipes.get()
		if !ok {
			t.Fatalf("pipe %d: none", len(taken))
		}
		taken = append(taken, p)
	}
	if _, ok := pipes.get(); ok {
		t.Fatalf("got a pipe past maxPipes (%d)", maxPipes)
	}
	pipes.put(taken[0])
	if p, ok := pipes.get(); !ok || p != taken[0] {
		t.Fatalf("got %v, %v; want the pipe given back", p, ok)
	}
	for _, p := range taken {
		pipes.put(p)
	}
	pipes.Close()
	if pipes.open != 0 || len(pipes.free) != 0 {
		t.Errorf("after close, %d pipes open, %d free; want none", pipes.open, len(pipes.free))
	}
}

// TestSendPartialWrites sends answers far larger than the socket buffers
// to a client that reads them late and a little at a time: the sender
// writes each in many partial writes, waiting for the socket between
// them, and the client gets every byte, head and page, in order: the
// pages spliced (see Sender.splice), and copied.
func TestSendPartialWrites(t *testing.T) {
	t.Run("spliced", func(t *testing.T) {
		var pipes Pipes
		defer pipes.Close()
		sendPartialWrites(t, &pipes)
	})
	t.Run("copied", func(t *testing.T) { sendPartialWrites(t, nil) })
}

func sendPartialWrites(t *testing.T, pipes *Pipes) {
	client, conn := connected(t)
	conn.SetWriteBuffer(64 << 10)
	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	client.(*net.TCPConn).SetReadBuffer(64 << 10)

	pages := [][]byte{bytes.Repeat([]byte("0123456789abcdef"), 1<<16), bytes.Repeat([]byte("page two "), 50_000)}
	// The second head alone is larger than the socket's buffer.
	heads := []string{strings.Repeat("head ", 1000), strings.Repeat("large head ", 30_000)}
	var want bytes.Buffer
	for i, p := range pages {
		want.WriteString(heads[i])
		want.Write(p)
	}

	got := make(chan []byte, 1)
	go func() {
		// Read slowly: the sender fills the socket's 64 kB and waits for
		// it, again and again, for each answer of more than 300 kB.
		client.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(&slowReader{r: client, n: 16 << 10}, int64(want.Len())))
		got <- b
	}()
	snd, err := NewSender(conn, pipes)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		if err := snd.SendBytes([]byte(heads[i]), offHeap(t, p), true); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("got %d bytes, want %d (the heads and pages, in order)", len(b), want.Len())
	}
}

// slowReader reads at most n bytes per millisecond.
type slowReader struct {
	r io.Reader
	n int
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p[:min(len(p), s.n)])
}
