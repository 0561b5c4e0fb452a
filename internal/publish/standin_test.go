package publish

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// standIn is an HTTP server in front of a bucket server, for a test to
// see or change what goes between publish and the bucket.
type standIn struct {
	URL   string       // http://127.0.0.1:PORT
	Addr  string       // 127.0.0.1:PORT
	conns atomic.Int64 // connections made to it
}

// startStandIn starts a stand-in for the bucket server at target
// ("http://HOST:PORT"), stopped when the test ends. Each request goes to
// intercept first (when not nil), which answers it and returns true, or
// leaves it to be passed on. The Host header is passed on as it came (an
// S3 signature covers it) unless serverHost says to send the server's own
// (fake-gcs-server serves an object's bytes at /BUCKET/OBJECT only to
// its public host).
func startStandIn(t *testing.T, target string, serverHost bool, intercept func(w http.ResponseWriter, r *http.Request) bool) *standIn {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		if !serverHost {
			r.Out.Host = r.In.Host
		}
	}}
	s := &standIn{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if intercept != nil && intercept(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s.URL, s.Addr = srv.URL, srv.Listener.Addr().String()
	return s
}

// refuser is an intercept of a stand-in (see startStandIn) that answers
// the first n requests that match with 503, its Content-Type and body, as
// a service in trouble does, and counts them.
type refuser struct {
	n                 int
	match             func(*http.Request) bool
	contentType, body string

	mu      sync.Mutex
	refused int
}

func (f *refuser) intercept(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	refuse := f.refused < f.n && f.match(r)
	if refuse {
		f.refused++
	}
	f.mu.Unlock()
	if refuse {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", f.contentType)
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, f.body)
	}
	return refuse
}

// count returns how many requests f answered.
func (f *refuser) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}
