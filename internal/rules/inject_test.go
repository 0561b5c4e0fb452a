package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesInjection gives every target a build folder, an output
// folder and a listen address holding a newline (the probe's case:
// rules cloudflare --root wrote it raw into wrangler.toml, where it could
// start a line such as account_id = "…"), and other characters that end a
// line: each target refuses, and writes nothing.
func TestRefusesInjection(t *testing.T) {
	bad := []string{"\n", "\r", "\x00", "\x1b", "\u2028", "\u0085", "\xff"}
	for _, tg := range Targets() {
		for _, c := range bad {
			for _, field := range []string{"root", "out", "listen"} {
				s, err := NewSite(sampleMan, sampleRoot, "127.0.0.1:8080")
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(t.TempDir(), "out")
				inject := c + `account_id = "attacker"` + c
				switch field {
				case "root":
					s.Root += inject
				case "out":
					out += inject
				case "listen":
					s.Listen = "127.0.0.1" + inject + ":8080"
				}
				_, _, err = Write(tg, s, out, false)
				if err == nil || !strings.HasPrefix(err.Error(), tg.Name+": ") {
					t.Errorf("%s, %q in %s: got %v, want a refusal", tg.Name, c, field, err)
				}
				if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) > 0 {
					t.Errorf("%s, %q in %s: wrote %v", tg.Name, c, field, entries)
				}
			}
		}
	}
}
