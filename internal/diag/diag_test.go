package diag

import (
	"strings"
	"testing"
)

func TestPrint(t *testing.T) {
	tests := []struct {
		l    List
		want string
	}{
		{List{{Path: "a.md", Line: 3, Msg: "bad"}}, "a.md:3: bad\nfeedgen: 1 error, nothing written\n"},
		{List{{Path: "a.md", Msg: "bad"}, {Msg: "worse"}}, "a.md: bad\nworse\nfeedgen: 2 errors, nothing written\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.l.Print(&b, "feedgen: %s, nothing written"); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("Print wrote %q, want %q", b.String(), tt.want)
		}
	}
}
