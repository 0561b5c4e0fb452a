package server

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSpliceReusesPipes sends answers with bodies to splice: each goes
// through one pipe of the pool, given back empty and taken again by the
// next answer; with splicing off, they are copied.
func TestSpliceReusesPipes(t *testing.T) {
	client, c := tcpPair(t)

	st, err := newStore()
	if err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte("spliced "), 4<<10)
	off := st.reserve(int64(len(page)))
	if err := st.writeAt(page, off); err != nil {
		t.Fatal(err)
	}
	if err := st.seal(); err != nil {
		t.Fatal(err)
	}
	body := st.bytes(off, int64(len(page)))

	var pipes pipePool
	defer pipes.close()
	snd, err := newSender(c.(*net.TCPConn), &pipes)
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
		if err := snd.sendBytes([]byte("head\r\n"), body, true); err != nil {
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
	var pipes pipePool
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
	pipes.close()
	if pipes.open != 0 || len(pipes.free) != 0 {
		t.Errorf("after close, %d pipes open, %d free; want none", pipes.open, len(pipes.free))
	}
}
