package rules

import (
	"strings"
	"testing"
)

// TestChunksServeAnswers asks feedgen serve on the chunks build of the
// sample every request of the shared table: each answer (status, the
// contract's headers, body) is feedgen serve's on the pages layout, which
// every target is held to. A limit that the pages layout does not
// pre-render is answered too.
func TestChunksServeAnswers(t *testing.T) {
	beyond := 0
	for _, r := range requests {
		want, got := ask(t, refBase, r), ask(t, chunkRefBase, r)
		if want.status == 404 && got.status == 200 && strings.HasPrefix(got.body, `{"count":66,`) && !prerendered(r.target) {
			beyond++ // a limit the pages layout does not pre-render: answered
			continue
		}
		if d := want.diff(got); d != "" {
			t.Errorf("%s %s (%s): %s", r.method, r.target, r.class, d)
		}
	}
	if beyond == 0 {
		t.Errorf("no request of the table asks for a limit that is not pre-rendered")
	}
	got := ask(t, chunkRefBase, request{method: "GET", target: "/articles/?limit=7&offset=3"})
	if got.status != 200 || !strings.HasPrefix(got.body, `{"count":66,"next":"https://api.example.com/articles/?limit=7&offset=10","previous":"https://api.example.com/articles/?limit=7","results":[{`) {
		t.Errorf("?limit=7&offset=3: %d %.200s", got.status, got.body)
	}
}

// prerendered reports whether the query of target names only limits
// that the sample pre-renders (20, 50, 100), or none.
func prerendered(target string) bool {
	_, q, _ := strings.Cut(target, "?")
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, "limit="); ok && v != "20" && v != "50" && v != "100" {
			return false
		}
	}
	return true
}
