//go:build linux

package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// writeBuild writes into dir, as a build does (each file replaced by a
// rename, the manifest last), the build in folder base with the pages in
// pages (path: bytes) in place of its own, and returns the bytes of every
// page of the new build, and of its manifest, by path.
func writeBuild(t testing.TB, dir, base string, pages map[string][]byte) map[string][]byte {
	t.Helper()
	files, m := writePages(t, dir, base, pages)
	testfiles.Replace(t, filepath.Join(dir, manifest.Name), m)
	files[manifest.Name] = m
	return files
}

// writePages is writeBuild without writing the manifest, which it
// returns.
func writePages(t testing.TB, dir, base string, pages map[string][]byte) (map[string][]byte, []byte) {
	t.Helper()
	m := readManifest(t, base)
	files := map[string][]byte{}
	for i, f := range m.Files {
		data, ok := pages[f.Path]
		if !ok {
			var err error
			if data, err = os.ReadFile(filepath.Join(base, filepath.FromSlash(f.Path))); err != nil {
				t.Fatal(err)
			}
		}
		sum := sha256.Sum256(data)
		m.Files[i].Size, m.Files[i].SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
		testfiles.Replace(t, filepath.Join(dir, filepath.FromSlash(f.Path)), data)
		files[f.Path] = data
	}
	return files, m.Marshal()
}

// switchedFrom waits for s to switch from build hb (Serve follows the
// builds written into its folder).
func switchedFrom(t *testing.T, s *Server, hb *heldBuild) {
	t.Helper()
	waitFor(t, 5*time.Second, "the switch to the new build", func() bool { return s.cur.Load() != hb })
}

// switchedTo waits for s to hold the build whose files writeBuild
// wrote, every page of it available. Not merely a switch: the server
// follows the folder, and may load it while writeBuild has replaced some
// pages but not yet the manifest (a build writes a marker, writeBuild
// does not); that build's replaced pages are unavailable, and the test
// would ask them.
func switchedTo(t *testing.T, s *Server, files map[string][]byte) {
	t.Helper()
	want := sha256.Sum256(files[manifest.Name])
	waitFor(t, 5*time.Second, "the switch to the build written", func() bool {
		hb := s.cur.Load()
		return hb.manifestSum == want && len(hb.unavailable) == 0
	})
}

// etagOf is the ETag of a body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// TestFileBuildHoldsNoPages checks that a build served from its folder
// keeps no page bytes of its own: every page is a record of its file,
// whose identity is that of the file on disk, and its body the file
// mapped; no store is made.
func TestFileBuildHoldsNoPages(t *testing.T) {
	sharedSites(t)
	s, _ := newServer(t, Options{Source: Folder(allSite.out)})
	hb := s.cur.Load()
	if hb.dir == nil || len(hb.stores) != 0 || len(hb.bySum) != 0 {
		t.Fatalf("a build from a folder has %d stores, %d bodies in memory, folder %v", len(hb.stores), len(hb.bySum), hb.dir)
	}
	n := 0
	for _, lp := range hb.main.limits {
		for i := range lp.pages {
			pg := &lp.pages[i]
			if pg.file == nil || pg.st != nil {
				t.Fatalf("limit %d page %d is not a file record", lp.limit, i)
			}
			if m := pg.file.mapped(); m == nil || len(pg.body) != len(m) || &pg.body[0] != &m[0] {
				t.Fatalf("limit %d page %d: its body is not its file's mapping", lp.limit, i)
			}
			path := hb.pagePath(hb.main, lp.limit, i)
			if got := hb.dir.stat(path); got != pg.file.id {
				t.Errorf("%s: recorded %+v, the file is %+v", path, pg.file.id, got)
			}
			if displayPath(pg.file.path) != path {
				t.Errorf("recorded path %q, want %q", pg.file.path, path)
			}
			n++
		}
	}
	if hb.read != n {
		t.Errorf("read %d pages, want each of the %d once", hb.read, n)
	}
	checkServes(t, s, allSite.out)
}

// TestRebuildRaceDescriptors runs the rebuild race with pages sent from
// descriptors only, through a cache of 4 files, so that requests often
// open a page file a newer build has replaced, and wait for the switch.
func TestRebuildRaceDescriptors(t *testing.T) {
	rebuildRace(t, descriptorsOnly, func(s *Server) { s.files = newFileCache(4) })
}

// TestReplacedWhileSending sends a page of 24 MB, far more than the
// socket buffers hold, to a client that reads slowly; in the middle, a
// new build replaces every file and the server switches to it. The answer
// completes with the old build's bytes, from the old inode.
func TestReplacedWhileSending(t *testing.T) {
	sharedSites(t)
	const big = "articles/50/0.json"
	old := bytes.Repeat([]byte("the old build's page, "), 24<<20/22)
	for _, mode := range sendModes {
		t.Run(mode.name, func(t *testing.T) {
			out := t.TempDir()
			writeBuild(t, out, allSite.out, map[string][]byte{big: old})
			opt := Options{Source: Folder(out)}
			mode.opt(&opt)
			s, _ := newServer(t, opt)
			addr := strings.TrimPrefix(serve(t, s), "http://")
			for _, connClose := range []bool{false, true} { // the fast path, net/http
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				conn.(*net.TCPConn).SetReadBuffer(32 << 10)
				conn.SetDeadline(time.Now().Add(20 * time.Second))
				req := "GET /articles/?limit=50 HTTP/1.1\r\nHost: x\r\n\r\n"
				if connClose {
					req = "GET /articles/?limit=50 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
				}
				io.WriteString(conn, req)
				br := bufio.NewReaderSize(conn, 16<<10)
				resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Fatal(err)
				}
				first := make([]byte, 1<<20)
				if _, err := io.ReadFull(resp.Body, first); err != nil {
					t.Fatal(err)
				}

				// A new build replaces every page, and the server switches.
				switchedTo(t, s, writeBuild(t, out, allSite.out, map[string][]byte{big: []byte(`"the new build's page"`)}))
				runtime.GC()
				runtime.GC()

				rest, err := io.ReadAll(&slowReader{r: resp.Body, n: 256 << 10})
				resp.Body.Close()
				conn.Close()
				body := append(first, rest...)
				if err != nil || !bytes.Equal(body, old) {
					t.Fatalf("Connection: close %v: got %d bytes (%v), want the %d of the old build's page", connClose, len(body), err, len(old))
				}
				if resp.Header.Get("Etag") != etagOf(old) {
					t.Errorf("ETag %s, want the old page's", resp.Header.Get("Etag"))
				}
				// Back to the old build for the next round.
				switchedTo(t, s, writeBuild(t, out, allSite.out, map[string][]byte{big: old}))
			}
		})
	}
}

// TestStaleWaitsForSwitch requests a page not mapped whose file a build
// being written has replaced: the request waits for the build to be
// complete (its manifest written) and the server to switch to it, and is
// answered from the new build, whole.
func TestStaleWaitsForSwitch(t *testing.T) {
	sharedSites(t)
	const target, path = "/articles/?limit=20&offset=3", "articles/20/3.json"
	for _, cache := range []string{"not open", "open"} {
		t.Run(cache, func(t *testing.T) {
			out := t.TempDir()
			writeBuild(t, out, allSite.out, nil)
			waiting := make(chan struct{}, 2) // a request waits for the switch
			s, _ := newServer(t, Options{Source: Folder(out), SwitchTimeout: 3 * time.Second, PollInterval: 50 * time.Millisecond, noMapping: true,
				onStale: func() {
					select {
					case waiting <- struct{}{}:
					default: // the test counts two
					}
				}})
			fast, plain := serveTwoWays(t, s)
			oldPage := file(t, out, 20, 3)
			if cache == "open" {
				// The old build's file stays open in the cache: it is
				// answered from it until the switch.
				readBody(t, request(s, http.MethodGet, target, nil))
			}

			newPage := []byte(`{"count":1,"next":null,"previous":null,"results":["the new build"]}`)
			_, m := writePages(t, out, allSite.out, map[string][]byte{path: newPage})
			type answer struct {
				status int
				etag   string
				body   []byte
				err    error
			}
			get := func(addr string) answer {
				resp, err := http.Get("http://" + addr + target)
				if err != nil {
					return answer{err: err}
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				return answer{resp.StatusCode, resp.Header.Get("Etag"), body, err}
			}
			answers := make(chan answer, 2)
			go func() { answers <- get(fast) }()
			go func() { answers <- get(plain) }()
			if cache == "open" {
				for range 2 {
					if a := <-answers; a.status != http.StatusOK || !bytes.Equal(a.body, oldPage) || a.etag != etagOf(oldPage) {
						t.Errorf("got %d %.60q ETag %s, want the old build's page from its open file", a.status, a.body, a.etag)
					}
				}
				hb := s.cur.Load()
				testfiles.Replace(t, filepath.Join(out, manifest.Name), m)
				switchedFrom(t, s, hb)
				go func() { answers <- get(fast) }()
				go func() { answers <- get(plain) }()
			} else {
				// Both requests wait for the switch; neither is answered
				// before the build is complete.
				for range 2 {
					select {
					case a := <-answers:
						t.Fatalf("answered %d %.60q before the build was complete", a.status, a.body)
					case <-waiting:
					}
				}
				testfiles.Replace(t, filepath.Join(out, manifest.Name), m)
			}
			for range 2 {
				a := <-answers
				if a.err != nil || a.status != http.StatusOK || !bytes.Equal(a.body, newPage) || a.etag != etagOf(newPage) {
					t.Errorf("got %d %.60q ETag %s (%v), want 200 and the new build's page", a.status, a.body, a.etag, a.err)
				}
			}
		})
	}
}

// TestStaleUnavailable requests pages not mapped whose files were
// replaced by one no build lists, or deleted: after SwitchTimeout without
// a switch they are answered 503, the same way by the fast path and
// net/http; later requests of the same build are answered 503 at once,
// and the pages not replaced still 200.
func TestStaleUnavailable(t *testing.T) {
	sharedSites(t)
	const wait = 300 * time.Millisecond
	out := t.TempDir()
	writeBuild(t, out, allSite.out, nil)
	s, _ := newServer(t, Options{Source: Folder(out), SwitchTimeout: wait, noMapping: true})
	fast, plain := serveTwoWays(t, s)
	testfiles.Replace(t, filepath.Join(out, "articles", "20", "3.json"), []byte("changed in place of the page"))
	os.Remove(filepath.Join(out, "articles", "20", "4.json"))

	const h = " HTTP/1.1\r\nHost: example.com:8080\r\n"
	start := time.Now()
	got := sameBothWays(t, fast, plain, "GET /articles/?limit=20&offset=3"+h+"\r\n", nil)
	if !strings.HasPrefix(got, "HTTP/1.1 503 Service Unavailable\r\n") || !strings.Contains(got, "\r\nRetry-After: 5\r\n") {
		t.Errorf("got %q, want a 503 with Retry-After", got)
	}
	if d := time.Since(start); d < wait {
		t.Errorf("answered after %s, want a wait of %s for a switch", d, wait)
	}
	start = time.Now()
	got = sameBothWays(t, fast, plain, "GET /articles/?limit=20&offset=4"+h+"\r\n", nil)
	if !strings.HasPrefix(got, "HTTP/1.1 503 ") {
		t.Errorf("a deleted page: got %q, want 503", got)
	}
	if d := time.Since(start); d > wait/2 {
		t.Errorf("a second request waited %s, want none past SwitchTimeout", d)
	}
	got = sameBothWays(t, fast, plain, "GET /articles/?limit=20&offset=5"+h+"\r\n", nil)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("a page not replaced: got %q, want 200", got)
	}
	// HEAD and 304 need no body: answered from the build's records.
	got = sameBothWays(t, fast, plain, "HEAD /articles/?limit=20&offset=3"+h+"\r\n", nil)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("HEAD: got %q, want 200", got)
	}
}

// TestDropDeleted checks that after a switch the cache closes the files
// that the new build replaced (writeBuild rewrites every file).
func TestDropDeleted(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	writeBuild(t, out, allSite.out, nil)
	s, _ := newServer(t, Options{Source: Folder(out), noMapping: true})
	url := serve(t, s)
	for _, off := range []int{1, 2, 3} {
		resp, err := http.Get(url + "/articles/?limit=20&offset=" + strconv.Itoa(off))
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
	}
	if n := s.files.len(); n != 3 {
		t.Fatalf("%d files open, want 3", n)
	}
	hb := s.cur.Load()
	writeBuild(t, out, allSite.out, map[string][]byte{"articles/20/2.json": []byte(`"new"`)})
	switchedFrom(t, s, hb)
	waitFor(t, 5*time.Second, "the files the build replaced to be closed", func() bool { return s.files.len() == 0 })
}

// TestMappingsReleased checks that loading a build maps its page files,
// and that they are unmapped once the server has switched to a build
// without them.
func TestMappingsReleased(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	writeBuild(t, out, allSite.out, nil)
	runtime.GC()
	before := liveMappings.Load()
	s, _ := newServer(t, Options{Source: Folder(out)})
	pages := int64(45 * 3)
	if got := liveMappings.Load() - before; got != pages {
		t.Fatalf("%d page files mapped, want %d", got, pages)
	}
	checkServesFast(t, s, out)
	alt := map[string][]byte{}
	for _, f := range readManifest(t, out).Files {
		alt[f.Path] = []byte(`"` + f.Path + `"`)
	}
	hb := s.cur.Load()
	writeBuild(t, out, allSite.out, alt)
	switchedFrom(t, s, hb)
	waitFor(t, 5*time.Second, "the old build's mappings to be unmapped", func() bool {
		runtime.GC()
		return liveMappings.Load() == before+pages
	})
	checkServesFast(t, s, out)
}

// TestMappedServesOwnBuild replaces and deletes page files of a build
// whose pages are mapped: it goes on answering with its own bytes, from
// its mappings, until it switches to the new build.
func TestMappedServesOwnBuild(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	old := writeBuild(t, out, allSite.out, nil)
	s, _ := newServer(t, Options{Source: Folder(out), PollInterval: 50 * time.Millisecond})
	fast, plain := serveTwoWays(t, s)
	newPage := []byte(`"the new build"`)
	_, m := writePages(t, out, allSite.out, map[string][]byte{"articles/20/3.json": newPage})
	os.Remove(filepath.Join(out, "articles", "20", "4.json"))
	for _, addr := range []string{fast, plain} {
		for off, path := range map[int]string{3: "articles/20/3.json", 4: "articles/20/4.json"} {
			resp, err := http.Get("http://" + addr + "/articles/?limit=20&offset=" + strconv.Itoa(off))
			if err != nil {
				t.Fatal(err)
			}
			if body := readBody(t, resp); resp.StatusCode != http.StatusOK || !bytes.Equal(body, old[path]) || resp.Header.Get("Etag") != etagOf(old[path]) {
				t.Errorf("%s: got %d %.60q, want the served build's page", path, resp.StatusCode, body)
			}
		}
	}
	hb := s.cur.Load()
	testfiles.Replace(t, filepath.Join(out, "articles", "20", "4.json"), old["articles/20/4.json"])
	testfiles.Replace(t, filepath.Join(out, manifest.Name), m)
	switchedFrom(t, s, hb)
	if body := readBody(t, request(s, http.MethodGet, "/articles/?limit=20&offset=3", nil)); !bytes.Equal(body, newPage) {
		t.Errorf("after the switch: got %.60q, want the new page", body)
	}
}

// TestLazyMapping serves a build loaded when no page file could be mapped
// (all the mappings allowed were taken), once mappings are allowed again:
// each page file is mapped by the first answer with it.
func TestLazyMapping(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	writeBuild(t, out, allSite.out, nil)
	s, _ := newServer(t, Options{Source: Folder(out), noMapping: true})
	hb := s.cur.Load()
	pg := &hb.main.limits[1].pages[3]
	if pg.file.mapped() != nil {
		t.Fatal("a page is mapped")
	}
	hb.dir.maps = mapLimit()
	checkServesFast(t, s, out)
	if pg.file.mapped() == nil {
		t.Error("a page sent is not mapped")
	}
	fast, plain := serveTwoWays(t, s)
	sameBothWays(t, fast, plain, "GET /articles/?limit=50&offset=7 HTTP/1.1\r\nHost: x\r\n\r\n", nil)
}

// checkServesFast fetches every page of the build in out from s, served
// on loopback (the fast path), and checks the bytes.
func checkServesFast(t *testing.T, s *Server, out string) {
	t.Helper()
	url := serve(t, s)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	for _, f := range readManifest(t, out).Files {
		limit, offset, index, ok := parsePage(f.Path)
		if !ok || index {
			continue
		}
		resp, err := client.Get(url + "/articles/?limit=" + strconv.Itoa(limit) + "&offset=" + strconv.Itoa(offset))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if got := readBody(t, resp); !bytes.Equal(got, want) {
			t.Fatalf("%s: got %.60q, want the file's bytes", f.Path, got)
		}
	}
}

// TestDescriptorLimit serves, in a process whose limit of open
// descriptors is 256, a build of more pages than that, to 16 clients at
// once, in both modes: every page is answered with its bytes.
func TestDescriptorLimit(t *testing.T) {
	if os.Getenv("FEEDGEN_TEST_NOFILE_DIR") != "" {
		t.Skip("in the helper process")
	}
	site := makeSite(t, corpus.Options{Articles: 300, Limits: []int{5, 20}, Seed: 1})
	for _, mode := range sendModes {
		t.Run(mode.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorLimitHelper$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "FEEDGEN_TEST_NOFILE_DIR="+site.out, "FEEDGEN_TEST_NOFILE_MODE="+mode.name)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestDescriptorLimitHelper") {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			t.Logf("helper: %s", bytes.TrimSpace(out))
		})
	}
}

// TestDescriptorLimitHelper is TestDescriptorLimit's process.
func TestDescriptorLimitHelper(t *testing.T) {
	dir := os.Getenv("FEEDGEN_TEST_NOFILE_DIR")
	if dir == "" {
		t.Skip("run by TestDescriptorLimit")
	}
	const nofile = 256
	rl := syscall.Rlimit{Cur: nofile, Max: nofile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	files := readTree(t, dir)
	m := readManifest(t, dir)
	if len(m.Files) <= nofile {
		t.Fatalf("a build of %d pages, want more than %d", len(m.Files), nofile)
	}
	opt := Options{Source: Folder(dir)}
	for _, mode := range sendModes {
		if mode.name == os.Getenv("FEEDGEN_TEST_NOFILE_MODE") {
			mode.opt(&opt)
		}
	}
	s, _ := newServer(t, opt)
	if s.files.limit > nofile/4 {
		t.Fatalf("the cache keeps up to %d files open with %d descriptors", s.files.limit, nofile)
	}
	url := serve(t, s)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	work := make(chan manifest.File)
	for range 16 {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for f := range work {
				limit, offset, index, _ := parsePage(f.Path)
				if index {
					continue
				}
				target := fmt.Sprintf("/articles/?limit=%d&offset=%d", limit, offset)
				resp, err := client.Get(url + target)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, files[f.Path]) {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %v %.60q", target, err, body))
					mu.Unlock()
				}
			}
		})
	}
	for round := range 2 {
		for _, f := range m.Files {
			work <- f
		}
		t.Logf("round %d: %d files open in the cache, %d descriptors in the process", round, s.files.len(), openDescriptors())
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d pages not served, the first: %s", len(errs), strings.Join(errs[:min(3, len(errs))], "; "))
	}
	if n := openDescriptors(); n > nofile {
		t.Errorf("%d descriptors open", n)
	}
}

// openDescriptors counts the descriptors the process has open.
func openDescriptors() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// TestNoEscape replaces page files of a served build with symbolic links:
// one to a file outside the folder (refused: not loaded, never sent) and
// one to a page inside it (followed). Then the same without openat2 (the
// fallback through an os.Root).
func TestNoEscape(t *testing.T) {
	sharedSites(t)
	for _, withoutOpenat2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("without openat2 %v", withoutOpenat2), func(t *testing.T) {
			if withoutOpenat2 {
				defer noOpenat2.Store(noOpenat2.Load())
				noOpenat2.Store(true)
			}
			out := t.TempDir()
			files := writeBuild(t, out, allSite.out, nil)
			outside := filepath.Join(t.TempDir(), "secret.json")
			if err := os.WriteFile(outside, files["articles/20/3.json"], 0o644); err != nil {
				t.Fatal(err)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.Remove(filepath.Join(out, "articles", "20", "3.json")))
			must(os.Symlink(outside, filepath.Join(out, "articles", "20", "3.json")))
			must(os.Rename(filepath.Join(out, "articles", "20", "4.json"), filepath.Join(out, "articles", "20", "4.real")))
			must(os.Symlink("4.real", filepath.Join(out, "articles", "20", "4.json")))

			s, log := newServer(t, Options{Source: Folder(out), StartTimeout: 100 * time.Millisecond, RetryInterval: 10 * time.Millisecond, noMapping: true})
			if got := s.Current().Unavailable; got != 1 || !strings.Contains(log.String(), "articles/20/3.json") {
				t.Fatalf("%d pages unavailable, log %q; want the link out of the folder refused", got, log.String())
			}
			for off, want := range map[int]int{3: http.StatusServiceUnavailable, 4: http.StatusOK} {
				resp := request(s, http.MethodGet, "/articles/?limit=20&offset="+strconv.Itoa(off), nil)
				if body := readBody(t, resp); resp.StatusCode != want || want == http.StatusOK && !bytes.Equal(body, files["articles/20/4.json"]) {
					t.Errorf("offset %d: got %d %.40q, want %d", off, resp.StatusCode, body, want)
				}
			}
		})
	}
}

// TestSameBuildRewritten writes the build being served again: into a
// folder made anew (every file a new inode, the manifest the same bytes),
// which the server switches to; and as the manifest alone, rewritten,
// which it does not.
func TestSameBuildRewritten(t *testing.T) {
	sharedSites(t)
	for _, mode := range sendModes {
		t.Run(mode.name, func(t *testing.T) {
			out := t.TempDir()
			writeBuild(t, out, allSite.out, nil)
			opt := Options{Source: Folder(out), PollInterval: 50 * time.Millisecond, SwitchTimeout: 10 * time.Second}
			mode.opt(&opt)
			ev := countEvents(&opt)
			s, _ := newServer(t, opt)
			serve(t, s)
			hb := s.cur.Load()
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			writeBuild(t, out, allSite.out, nil)
			switchedFrom(t, s, hb)
			start := time.Now()
			checkServesFast(t, s, out)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("answering took %s", d)
			}

			hb = s.cur.Load()
			data, err := os.ReadFile(filepath.Join(out, manifest.Name))
			if err != nil {
				t.Fatal(err)
			}
			a, p := ev.counts()
			testfiles.Replace(t, filepath.Join(out, manifest.Name), data)
			ev.waitMore(t, "the manifest written again to be loaded, and a poll", a, p, 1, 1)
			if s.cur.Load() != hb {
				t.Error("switched after the manifest alone was written again")
			}
		})
	}
}

// TestStaleNudge rewrites a page file with the same bytes, as a new
// inode, the manifest left alone: the first request that finds it has
// the server load the folder again, and is answered well before
// SwitchTimeout.
func TestStaleNudge(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	files := writeBuild(t, out, allSite.out, nil)
	s, _ := newServer(t, Options{Source: Folder(out), PollInterval: time.Hour, SwitchTimeout: 10 * time.Second, noMapping: true})
	url := serve(t, s)
	testfiles.Replace(t, filepath.Join(out, "articles", "20", "3.json"), files["articles/20/3.json"])
	start := time.Now()
	resp, err := http.Get(url + "/articles/?limit=20&offset=3")
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK || !bytes.Equal(body, files["articles/20/3.json"]) {
		t.Errorf("got %d %.60q, want the page", resp.StatusCode, body)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("answered after %s", d)
	}
}
