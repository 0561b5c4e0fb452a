package manifest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestParseHead checks that ParseHead reads what Parse reads of a
// manifest but its lists, and refuses what Parse refuses.
func TestParseHead(t *testing.T) {
	until := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	m := &Manifest{Format: Format, Generator: "feedgen test", BuildTime: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC),
		BaseURL: "https://api.example.com", Articles: 3, ConfigSHA256: strings.Repeat("a", 64), ContentSHA256: strings.Repeat("b", 64),
		Source: &Source{Until: &until},
		Files:  []File{{Path: "articles/20/0.json", Size: 10, SHA256: strings.Repeat("c", 64)}}}
	data := m.Marshal()
	full, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ParseHead(data)
	if err != nil {
		t.Fatal(err)
	}
	if head.Files != nil || head.Collections != nil {
		t.Errorf("ParseHead read the lists: %d files, %d collections", len(head.Files), len(head.Collections))
	}
	full.Files, full.Collections = nil, nil
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(head)
	if string(a) != string(b) {
		t.Errorf("ParseHead:\n%s\nParse:\n%s", b, a)
	}
	for _, bad := range []string{`{"format":1`, `{"format":99,"files":[]}`, `[]`, `{"format":1,"build_time":"x"}`, `{"format":1,"pagination":[]}`} {
		_, errFull := Parse([]byte(bad))
		_, errHead := ParseHead([]byte(bad))
		if errFull == nil || errHead == nil || strings.Contains(bad, "99") && errFull.Error() != errHead.Error() {
			t.Errorf("%s: Parse %v, ParseHead %v", bad, errFull, errHead)
		}
	}
}
