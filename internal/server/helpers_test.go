package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/manifest"
)

// buildTime is the fixed build time of the test sites.
var buildTime = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// testSite is a generated site and its built output.
type testSite struct {
	dir string // the site: config.yaml and content
	out string // its output folder
}

// Sites shared by the tests, built once by TestMain and never written to
// again: 45 articles with limits 5 (default), 20 and 50 (max), every
// offset or aligned ones, and a site without articles.
var allSite, alignSite, noneSite testSite

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "feedgen-server-test")
	if err != nil {
		panic(err)
	}
	sites := []struct {
		s   *testSite
		opt corpus.Options
	}{
		{&allSite, corpus.Options{Articles: 45, Limits: []int{5, 20, 50}, Seed: 1}},
		{&alignSite, corpus.Options{Articles: 45, Limits: []int{5, 20, 50}, Offsets: "aligned", Seed: 1}},
		{&noneSite, corpus.Options{Articles: 0, Limits: []int{5, 20}, Seed: 1}},
	}
	for i, st := range sites {
		if *st.s, err = writeSite(filepath.Join(dir, strconv.Itoa(i)), st.opt); err == nil {
			_, err = st.s.buildInto(st.s.out)
		}
		if err != nil {
			os.RemoveAll(dir)
			panic(err)
		}
	}
	code := m.Run()
	azurite.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// makeSite writes a corpus site into a new temporary folder and builds it.
func makeSite(t testing.TB, opt corpus.Options) testSite {
	t.Helper()
	s, err := writeSite(t.TempDir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	s.build(t, s.out)
	return s
}

// writeSite writes a corpus site into dir.
func writeSite(dir string, opt corpus.Options) (testSite, error) {
	if _, err := corpus.Write(dir, opt); err != nil {
		return testSite{}, err
	}
	return testSite{dir: dir, out: filepath.Join(dir, "public")}, nil
}

// build builds the site into out with a new builder, as a separate
// "feedgen build" would.
func (s testSite) build(t testing.TB, out string) *build.Result {
	t.Helper()
	res, err := s.buildInto(out)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return res
}

func (s testSite) buildInto(out string) (*build.Result, error) {
	return build.New(build.Options{
		FS: os.DirFS(s.dir), ConfigName: corpus.ConfigPath, Root: s.dir, OutDir: out,
		Now: func() time.Time { return buildTime }, Generator: "feedgen test",
	}).Build(context.Background())
}

// file returns the bytes of the page file (limit, offset) of an output.
func file(t testing.TB, out string, limit, offset int) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "articles", strconv.Itoa(limit), strconv.Itoa(offset)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readManifest reads the manifest of an output.
func readManifest(t testing.TB, out string) *manifest.Manifest {
	t.Helper()
	r, err := manifest.Read(os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	return r.Manifest
}

// newServer returns a server for out, its log going to the returned buffer.
func newServer(t testing.TB, opt Options) (*Server, *eventtest.Buffer) {
	t.Helper()
	var log eventtest.Buffer
	if opt.Log == nil {
		opt.Log = &log
	}
	s, err := New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s, &log
}

// request answers a request for target (path and raw query, as sent)
// through the handler.
func request(h http.Handler, method, target string, header http.Header) *http.Response {
	path, query, hasQuery := cutQuery(target)
	r := &http.Request{
		Method:     method,
		URL:        &url.URL{Path: path, RawQuery: query, ForceQuery: hasQuery && query == ""},
		RequestURI: target,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:     header,
		Host:       "example.com",
		RemoteAddr: "192.0.2.1:1234",
		Body:       http.NoBody,
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r.WithContext(context.Background()))
	return rec.Result()
}

func cutQuery(target string) (path, query string, ok bool) {
	for i := 0; i < len(target); i++ {
		if target[i] == '?' {
			return target[:i], target[i+1:], true
		}
	}
	return target, "", false
}

func readBody(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The two ways a page of a build in a folder is sent.
var sendModes = []struct {
	name string
	opt  func(*Options)
}{
	{"mapped", func(*Options) {}},
	{"descriptors", descriptorsOnly},
}

// descriptorsOnly makes a server send every page file from an open
// descriptor (sendfile), never mapped.
func descriptorsOnly(o *Options) { o.noMapping = true }
