package feed

import (
	"bytes"
	"fmt"
	"testing"
)

// TestRunReader checks that a runReader returns the bytes asked for
// whatever the order of the reads: in order, as a merge reads a run,
// across the block read ahead, backwards (articles of equal rank sorted
// apart), longer than a read, and up to the end of the run; through the
// page cache and past it.
func TestRunReader(t *testing.T) {
	const size = 3*readerSize + 5*blockSize
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	type read struct {
		off int64
		n   int
	}
	var inOrder []read
	for off := int64(0); off+1000 <= size; off += 1000 {
		inOrder = append(inOrder, read{off, 1000})
	}
	tests := []struct {
		name  string
		reads []read
	}{
		{"in order", inOrder},
		{"across the block ahead", []read{{0, 10}, {readerSize - 5, 10}, {2*readerSize - 3, 6}, {2*readerSize + 100, 50}}},
		{"backwards", []read{{2 * readerSize, 100}, {5, 100}, {readerSize + 7, 3}, {0, 1}}},
		{"longer than a read", []read{{3, 2*readerSize + 11}, {100, 10}, {2 * readerSize, readerSize}}},
		{"up to the end", []read{{size - 4000, 4000}, {size - 1, 1}, {0, size}}},
		{"skipping", []read{{0, 1}, {2*readerSize + 1, 1}, {readerSize, 1}, {3 * readerSize, 1}}},
	}
	for _, direct := range []bool{false, true} {
		f, err := newSpillFile(t.TempDir(), direct)
		if err != nil {
			t.Fatal(err)
		}
		defer f.close()
		buf := alignedBuf(size)
		copy(buf, data)
		if err := f.writeAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/direct=%v", tt.name, direct), func(t *testing.T) {
				var r runReader
				for _, rd := range tt.reads {
					got, err := r.read(f, rd.off, rd.n, size)
					if err != nil {
						t.Fatalf("read(%d, %d): %v", rd.off, rd.n, err)
					}
					if want := data[rd.off : rd.off+int64(rd.n)]; !bytes.Equal(got, want) {
						t.Fatalf("read(%d, %d): got other bytes than written", rd.off, rd.n)
					}
				}
				if r.pending != nil {
					<-r.pending
				}
			})
		}
	}
}

// TestRunReaderPastEnd checks that a read past what was written fails
// rather than return bytes that are not there.
func TestRunReaderPastEnd(t *testing.T) {
	f, err := newSpillFile(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	if err := f.writeAt(alignedBuf(blockSize), 0); err != nil {
		t.Fatal(err)
	}
	var r runReader
	if _, err := r.read(f, blockSize-10, 20, 4*blockSize); err == nil {
		t.Error("got no error")
	}
}

// TestAlignedBuf checks the alignment that reading and writing past the
// page cache needs.
func TestAlignedBuf(t *testing.T) {
	for _, n := range []int{1, blockSize - 1, blockSize, 3*blockSize + 1} {
		b := alignedBuf(n)
		if len(b)%blockSize != 0 || len(b) < n || cap(b) != len(b) {
			t.Errorf("alignedBuf(%d): got len %d cap %d", n, len(b), cap(b))
		}
		if addr := bufAddr(b); addr%blockSize != 0 {
			t.Errorf("alignedBuf(%d): got address %#x", n, addr)
		}
	}
}

// TestDirectWhereAllowed checks that a spill file on a file system that
// allows it is read and written past the page cache, as the build on
// Linux relies on.
func TestDirectWhereAllowed(t *testing.T) {
	f, err := newSpillFile(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	if f.direct == nil {
		t.Skip("the file system of the temporary folder has no O_DIRECT")
	}
	if err := f.writeAt(alignedBuf(blockSize), 0); err != nil {
		t.Fatal(err)
	}
	if f.refused.Load() {
		t.Error("an aligned write past the page cache was refused")
	}
}
