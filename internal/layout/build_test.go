package layout

import "testing"

func TestNameList(t *testing.T) {
	if got, want := NameList(), `"pages" or "chunks"`; got != want {
		t.Errorf("NameList() = %s, want %s", got, want)
	}
}
