package main

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePublishVsFlags(t *testing.T) {
	t.Setenv("FEEDGEN_VERSITYGW", "/opt/versitygw")
	full := publishVsPlan{articles: 10_000, seed: 1, versitygw: "/opt/versitygw", aws: "/usr/bin/aws", rclone: "/usr/bin/rclone"}
	quick := full
	quick.articles, quick.quick = 1_000, true
	tests := []struct {
		args    []string
		want    publishVsPlan
		wantErr bool
	}{
		{nil, full, false},
		{[]string{"-quick"}, quick, false},
		{[]string{"-quick", "-articles", "500"}, func() publishVsPlan { p := quick; p.articles = 500; return p }(), false},
		{[]string{"-aws", "aws", "-rclone", "/bin/rclone", "-versitygw", "gw"}, func() publishVsPlan {
			p := full
			p.aws, p.rclone, p.versitygw = "aws", "/bin/rclone", "gw"
			return p
		}(), false},
		{[]string{"-articles", "5"}, publishVsPlan{}, true},
		{[]string{"extra"}, publishVsPlan{}, true},
	}
	for _, tt := range tests {
		got, err := parsePublishVsFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := parsePublishVsFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
}

// TestCountingProxy: the proxy passes requests on with the host the client
// signed, and counts per bucket the objects written and deleted (a
// multi-object delete by its keys; failed requests and feedgen's lock not)
// and the bodies' bytes.
func TestCountingProxy(t *testing.T) {
	var hosts []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	p, err := newCountingProxy(strings.TrimPrefix(backend.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	base := "http://" + p.Addr()
	do := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("PUT", "/b1/articles/20/0.json", "12345")
	do("PUT", "/b1/.feedgen-publish-lock", "lock")
	do("PUT", "/b1/missing", "123")
	do("GET", "/b1?list-type=2", "")
	do("DELETE", "/b1/articles/20/1.json", "")
	const deleteBody = "<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object></Delete>"
	do("POST", "/b1?delete", deleteBody)
	do("PUT", "/b2/x", "1")
	got := p.counts("b1")
	want := requestCounts{requests: 6, puts: 1, deletes: 3, sent: 5 + 4 + 3 + int64(len(deleteBody)), received: 2*5 + 3}
	if got != want {
		t.Errorf("b1: got %+v, want %+v", got, want)
	}
	if got := p.counts("b2"); got.puts != 1 || got.requests != 1 {
		t.Errorf("b2: got %+v", got)
	}
	for _, h := range hosts {
		if h != p.Addr() {
			t.Errorf("the server got Host %s, want the proxy's %s, which the client signed", h, p.Addr())
		}
	}
	p.reset()
	if got := p.counts("b1"); got != (requestCounts{}) {
		t.Errorf("after reset: %+v", got)
	}
}

func TestSameTree(t *testing.T) {
	build, bucket := t.TempDir(), t.TempDir()
	write := func(dir, name, data string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(build, "articles/20/0.json", "a")
	write(build, "manifest.json", "m")
	write(bucket, "articles/20/0.json", "a")
	if got := sameTree(build, bucket); got != "manifest.json is missing" {
		t.Errorf("got %q", got)
	}
	write(bucket, "manifest.json", "m")
	write(bucket, ".feedgen-publish-lock", "l")
	write(bucket, ".sgwtmp/x", "l")
	if got := sameTree(build, bucket); got != "" {
		t.Errorf("got %q, want the same", got)
	}
	write(bucket, "articles/20/0.json", "b")
	if got := sameTree(build, bucket); got != "articles/20/0.json has other bytes" {
		t.Errorf("got %q", got)
	}
	write(bucket, "articles/20/0.json", "a")
	write(bucket, "articles/20/1.json", "a")
	if got := sameTree(build, bucket); got != "articles/20/1.json is not in the build" {
		t.Errorf("got %q", got)
	}
}
