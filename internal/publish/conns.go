package publish

import "net/http"

// newTransport returns the HTTP transport of a bucket of a cloud:
// net/http's default, keeping an idle connection to the bucket's host for
// each of workers uploads at once (see keepConns).
func newTransport(workers int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	keepConns(tr, workers)
	return tr
}

// keepConns makes tr keep an idle connection to a host for each of
// workers requests at once. net/http keeps 2 (the AWS SDK 10): with more
// uploads at once, each one that ends beyond those closes its connection,
// and the next upload dials another, a TCP and TLS handshake each time
// (1,309 files to fake-gcs-server took 247 connections).
func keepConns(tr *http.Transport, workers int) {
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, workers)
	if tr.MaxIdleConns != 0 { // 0: no limit
		tr.MaxIdleConns = max(tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
	}
}
