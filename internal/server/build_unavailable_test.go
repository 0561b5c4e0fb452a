package server

import (
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// damagedPages are the pages killedBuild leaves other than the manifest
// says: rewritten, cut short, and not yet written.
var damagedPages = []string{"articles/20/0.json", "articles/5/3.json", "articles/5/7.json"}

// killedBuild writes into a new folder what a build killed mid-write
// leaves: the manifest and pages of the build before it (of site a), but
// some pages (damagedPages) already rewritten or removed.
func killedBuild(t *testing.T) (out string, a, b testSite) {
	t.Helper()
	a = makeSite(t, corpus.Options{Articles: 10, Limits: []int{5, 20}, Seed: 1})
	b = makeSite(t, corpus.Options{Articles: 12, Limits: []int{5, 20}, Seed: 2})
	out = t.TempDir()
	a.build(t, out)
	testfiles.Replace(t, filepath.Join(out, damagedPages[0]), string(readTree(t, b.out)[damagedPages[0]]))
	if err := os.Truncate(filepath.Join(out, damagedPages[1]), 10); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, damagedPages[2])); err != nil {
		t.Fatal(err)
	}
	return out, a, b
}

var unavailableLine = regexp.MustCompile(`(?m)^3 pages of the build of 2026-11-01T12:00:00Z do not match its manifest \(a build died or is being written, or they changed since\): articles/20/0\.json, articles/5/3\.json, articles/5/7\.json; answering 503 for them until a build rewrites them \(feedgen build; --clean checks every file's bytes\)$`)

// checkPartial checks that s answers the pages of build a that match with
// their bytes, and 503 for damagedPages, and said so once on log.
func checkPartial(t *testing.T, s *Server, log *eventtest.Buffer, a testSite) {
	t.Helper()
	if n := len(unavailableLine.FindAllString(log.String(), -1)); n != 1 {
		t.Errorf("got %d lines about the pages that do not match, want 1; log:\n%s", n, log.String())
	}
	ref := readTree(t, a.out)
	for _, f := range readManifest(t, a.out).Files {
		limit, offset, index, _ := parsePage(f.Path)
		if index {
			continue
		}
		target := "/articles/?limit=" + strconv.Itoa(limit) + "&offset=" + strconv.Itoa(offset)
		resp := request(s, http.MethodGet, target, nil)
		body := readBody(t, resp)
		if !strings.Contains(strings.Join(damagedPages, " "), f.Path) {
			if resp.StatusCode != http.StatusOK || string(body) != string(ref[f.Path]) {
				t.Errorf("%s: got %d %.60q, want 200 and the bytes of %s", target, resp.StatusCode, body, f.Path)
			}
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable || string(body) != `{"detail":"Service temporarily unavailable, try again later."}` {
			t.Errorf("%s: got %d %q, want 503 and its body", target, resp.StatusCode, body)
		}
		checkHeaders(t, resp.Header, header{
			"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json",
			"Content-Length": "62", "Retry-After": "5", "Date": "*",
		})
	}
}

// TestServeKilledBuild starts a server on the folder of a build that was
// killed mid-write: no build is running, so it serves at once the pages
// that match the manifest, 503 for the others, and switches to the next
// complete build.
func TestServeKilledBuild(t *testing.T) {
	out, a, b := killedBuild(t)
	start := time.Now()
	s, log := newServer(t, Options{Source: Folder(out), StartTimeout: 3 * time.Second, RetryInterval: 5 * time.Millisecond, PollInterval: 30 * time.Millisecond})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("New took %s with no build running, want no wait", d)
	}
	checkPartial(t, s, log, a)

	ev := followBuilds(t, s)
	a0, p0 := ev.counts()
	ev.waitMore(t, "retries", a0, p0, 3, 0)
	if n := strings.Count(log.String(), "\n"); n != 2 {
		t.Errorf("got %d log lines while retrying, want the 2 of the load; log:\n%s", n, log.String())
	}
	b.build(t, out)
	waitFor(t, 5*time.Second, "the switch to the next build", func() bool { return s.Current().Articles == 12 })
	checkServes(t, s, out)
}

// TestServeKilledBuildSameManifest mends a killed build with a build of
// the same content, whose manifest is the same bytes: the server loads
// the pages it lacked.
func TestServeKilledBuildSameManifest(t *testing.T) {
	out, a, _ := killedBuild(t)
	s, _ := newServer(t, Options{Source: Folder(out), RetryInterval: 5 * time.Millisecond, PollInterval: 30 * time.Millisecond})
	followBuilds(t, s)
	a.build(t, out)
	waitFor(t, 5*time.Second, "every page to be served", func() bool {
		return request(s, http.MethodGet, "/articles/?limit=20", nil).StatusCode == http.StatusOK
	})
	checkServes(t, s, out)
}

// TestServeWhileBuildRuns starts a server on a folder a build holds, its
// pages half written: it waits StartTimeout, then serves what matches.
func TestServeWhileBuildRuns(t *testing.T) {
	out, a, _ := killedBuild(t)
	holdBuildLock(t, out)
	start := time.Now()
	s, log := newServer(t, Options{Source: Folder(out), StartTimeout: 300 * time.Millisecond, RetryInterval: 5 * time.Millisecond})
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("New took %s while a build runs, want it to wait StartTimeout", d)
	}
	checkPartial(t, s, log, a)
}

// TestUnavailableFastMatchesNetHTTP checks that the fast path sends the
// 503 of a page that does not match its manifest as net/http does.
func TestUnavailableFastMatchesNetHTTP(t *testing.T) {
	out, _, _ := killedBuild(t)
	s, _ := newServer(t, Options{Source: Folder(out)})
	fast, plain := serveTwoWays(t, s)
	const h = " HTTP/1.1\r\nHost: example.com:8080\r\n"
	for _, req := range []string{
		"GET /articles/?limit=20" + h + "\r\n",
		"HEAD /articles/?offset=3" + h + "\r\n",
		"GET /articles/?offset=7" + h + "If-None-Match: *\r\n\r\n",
		"GET /articles/?offset=7" + h + "\r\nGET /articles/?offset=1" + h + "\r\n",
	} {
		got := sameBothWays(t, fast, plain, req, []string{strings.Fields(req)[0], "GET"}[:strings.Count(req, "HTTP/1.1")])
		if !strings.HasPrefix(got, "HTTP/1.1 503 Service Unavailable\r\n") || !strings.Contains(got, "\r\nRetry-After: 5\r\n") {
			t.Errorf("%q: got %q, want a 503 with Retry-After", req, got)
		}
	}
}

// TestMalformedManifestKeepsBuild moves malformed manifests into a served
// folder: each is refused on one log line, without a panic or memory
// sized by its numbers, and the build served stays.
func TestMalformedManifestKeepsBuild(t *testing.T) {
	a := makeSite(t, corpus.Options{Articles: 10, Limits: []int{5, 20}, Seed: 1})
	out := t.TempDir()
	a.build(t, out)
	good, err := os.ReadFile(filepath.Join(out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	s, log := newServer(t, Options{Source: Folder(out), PollInterval: 20 * time.Millisecond, RetryInterval: 5 * time.Millisecond})
	ev := followBuilds(t, s)

	tests := []struct {
		name string
		edit func(m *manifest.Manifest)
		why  string // what the log line says after "not switching builds: "; the manifest's name by default
	}{
		{"page of 2^50 bytes", func(m *manifest.Manifest) { m.Files[1].Size = 1 << 50 }, ""},
		{"two pages of 2^50 bytes", func(m *manifest.Manifest) { m.Files[1].Size, m.Files[2].Size = 1<<50, 1<<50 }, ""},
		{"count of 2^40", func(m *manifest.Manifest) { m.Articles, m.Collections[0].Count = 1<<40, 1<<40 }, ""},
		{"count of 10^8, few pages", func(m *manifest.Manifest) { m.Articles, m.Collections[0].Count = 1e8, 1e8 }, ""},
		{"count of 2^40, not the articles'", func(m *manifest.Manifest) { m.Collections[0].Count = 1 << 40 }, ""},
		{"limit of MaxInt, aligned", func(m *manifest.Manifest) {
			m.Pagination.Offsets, m.Pagination.Limits, m.Pagination.MaxLimit = "aligned", []int{5, math.MaxInt}, math.MaxInt
			m.Files = append(m.Files, manifest.File{Path: "articles/9223372036854775807/0.json", Size: m.Files[0].Size, SHA256: m.Files[0].SHA256})
		}, "articles/9223372036854775807/0.json: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Parse(good)
			if err != nil {
				t.Fatal(err)
			}
			tt.edit(m)
			before := log.String()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			a0, p0 := ev.counts()
			testfiles.Replace(t, filepath.Join(out, manifest.Name), string(m.Marshal()))
			waitFor(t, 5*time.Second, "the manifest to be refused", func() bool { return len(log.String()) > len(before) })
			ev.waitMore(t, "a few polls", a0, p0, 0, 3)
			runtime.ReadMemStats(&m1)
			said := strings.TrimPrefix(log.String(), before)
			why := tt.why
			if why == "" {
				why = manifest.Name + ": "
			}
			if strings.Count(said, "\n") != 1 || !strings.Contains(said, "not switching builds: "+why) {
				t.Errorf("got log %q, want one line saying why the manifest was refused", said)
			}
			if d := m1.TotalAlloc - m0.TotalAlloc; d > 4<<20 {
				t.Errorf("refusing the manifest allocated %d bytes", d)
			}
			checkServes(t, s, a.out)
		})
	}
}
