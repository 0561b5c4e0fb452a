package manifest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// TestScanFiles checks the streaming reader against Parse: the same
// files of a manifest Marshal wrote, and errors for what is not one.
func TestScanFiles(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	m := &Manifest{Format: Format, Generator: "g", BuildTime: time.Unix(0, 0).UTC(), BaseURL: "https://x",
		Collections: []Collection{{Dir: listing.Dir, Count: 3, Params: []listing.Param{}}},
		Files: []File{{Path: "articles/20/0.json", Size: 10, SHA256: sum, Input: sum},
			{Path: "articles/tag/a%/20/0.json", Size: 0, SHA256: sum}}}
	data := m.Marshal()
	var got []File
	format, err := ScanFiles(strings.NewReader(string(data)), func(f File) error {
		got = append(got, f)
		return nil
	})
	if err != nil || format != Format || len(got) != 2 || got[0] != m.Files[0] || got[1] != m.Files[1] {
		t.Fatalf("got %d, %v, %+v", format, err, got)
	}
	stop := errors.New("stop")
	if _, err := ScanFiles(strings.NewReader(string(data)), func(File) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v", err)
	}
	for _, tt := range []struct{ name, data, want string }{
		{"cut", string(data[:len(data)/2]), "unexpected EOF"},
		{"format", strings.Replace(string(data), `"format":1`, `"format":2`, 1), "format 2 is not supported"},
		{"no format", `{"files":[]}`, "no format"},
		{"no files", `{"format":1}`, "no files"},
		{"outside", `{"format":1,"files":[{"path":"../x","size":1,"sha256":"` + sum + `"}]}`, "outside"},
		{"not a page", `{"format":1,"files":[{"path":"index.html","size":1,"sha256":"` + sum + `"}]}`, "not under articles/"},
		{"no sum", `{"format":1,"files":[{"path":"articles/x","size":1}]}`, "no SHA-256"},
		{"negative", `{"format":1,"files":[{"path":"articles/x","size":-1,"sha256":"` + sum + `"}]}`, "negative size"},
		{"not an object", `[1]`, "want {"},
		{"files twice", `{"format":1,"files":[],"files":[]}`, "ambiguous"},
		{"Files", `{"format":1,"Files":[],"files":[]}`, "ambiguous"},
		{"trailing garbage inside", `{"format":1,"files":[],"x":{"a":[1,{"b":2}]}`, "EOF"},
	} {
		_, err := ScanFiles(strings.NewReader(tt.data), func(File) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	// Other keys of any shape are skipped.
	ok := `{"x":{"a":[1,{"b":[]}]},"format":1,"y":"z","files":[]}`
	if _, err := ScanFiles(strings.NewReader(ok), func(File) error { return nil }); err != nil {
		t.Errorf("skipping other keys: %v", err)
	}
}

// FuzzScanFiles checks that the streaming reader never panics, and that
// what it accepts Parse reads to the same files.
func FuzzScanFiles(f *testing.F) {
	sum := strings.Repeat("ab", 32)
	f.Add(`{"format":1,"files":[{"path":"articles/20/0.json","size":1,"sha256":"` + sum + `"}]}`)
	f.Add(`{"format":1,"collections":[{"dir":"articles","params":[],"count":0}],"files":[]}`)
	f.Fuzz(func(t *testing.T, data string) {
		var got []File
		if _, err := ScanFiles(strings.NewReader(data), func(f File) error {
			got = append(got, f)
			return nil
		}); err != nil {
			return
		}
		m, err := Parse([]byte(data))
		if err != nil {
			return // Parse is stricter about the other keys' types
		}
		if len(m.Files) != len(got) {
			t.Fatalf("ScanFiles read %d files, Parse %d", len(got), len(m.Files))
		}
		for i := range got {
			if got[i] != m.Files[i] {
				t.Fatalf("file %d: %+v vs %+v", i, got[i], m.Files[i])
			}
		}
	})
}
