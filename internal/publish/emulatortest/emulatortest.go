// Package emulatortest starts the local stand-ins of two clouds' object
// storage for tests that publish to them: fake-gcs-server for gs:// and
// Azurite for azblob://, each on a free port of 127.0.0.1 over temporary
// folders, stopped when the test ends, or for Azurite, which is slow to
// start, when the package's tests end (Shared) (versitytest, S3's, uses
// its Find and WaitHTTP). make test installs them, pinned, into .cache; without
// them a test is skipped, or fails under FEEDGEN_RUNTIMES=required.
package emulatortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// Server is an emulator started for a test.
type Server struct {
	Endpoint string        // 127.0.0.1:PORT
	n        *atomic.Int64 // buckets made, by every test it serves
	make     func(t *testing.T, name string)
	url      func(name string) string
}

// NewBucket makes an empty bucket and returns its URL. The store is ""
// (the emulators keep objects in their own formats).
func (s *Server) NewBucket(t *testing.T) (url, store string) {
	t.Helper()
	name := fmt.Sprintf("feed-%d", s.n.Add(1))
	s.make(t, name)
	return s.url(name), ""
}

// Find returns the path of a program a test starts: $env, $PATH, or the
// repository's .cache (pattern under it), where make test installs it; it
// skips the test without one, or fails it under FEEDGEN_RUNTIMES=required.
func Find(t testing.TB, env, name, pattern string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if root := moduleRoot(); root != "" {
		if found, _ := filepath.Glob(filepath.Join(root, ".cache", pattern)); len(found) > 0 {
			slices.Sort(found)
			return found[len(found)-1]
		}
	}
	msg := name + " not found: set " + env + ", put it in $PATH, or run make test, which installs it into .cache"
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Start runs the server cmd that args makes for a free port until the
// test ends (then kills it), waits until that port answers HTTP, and returns its
// 127.0.0.1:PORT and process. A port taken meanwhile is tried again.
func Start(t *testing.T, name string, args func(port string) *exec.Cmd) (string, *os.Process) {
	t.Helper()
	endpoint, p, stop, err := start(name, args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return endpoint, p
}

// start runs the server cmd that args makes for a free port, waits until
// that port answers HTTP, and returns its 127.0.0.1:PORT, its process and
// what kills it. A port taken meanwhile is tried again.
func start(name string, args func(port string) *exec.Cmd) (endpoint string, p *os.Process, stop func(), err error) {
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, nil, err
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		var logs bytes.Buffer
		cmd := args(port)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		cmd.WaitDelay = 5 * time.Second // a child of node's may hold the pipes
		if err := cmd.Start(); err != nil {
			return "", nil, nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		endpoint := "127.0.0.1:" + port
		if err := WaitHTTP("http://"+endpoint, exited, 30*time.Second); err != nil {
			cmd.Process.Kill()
			<-exited
			if attempt < 3 && (strings.Contains(logs.String(), "EADDRINUSE") || strings.Contains(logs.String(), "address already in use")) {
				continue
			}
			return "", nil, nil, fmt.Errorf("starting %s: %w\n%s", name, err, logs.String())
		}
		// Killed, not interrupted: what it holds is the test's and goes
		// with it, and Azurite, asked to stop, waits 5 s for the idle
		// connections of the clients (a second of make test in 5).
		stop := func() {
			resume(cmd.Process) // one a test stopped
			cmd.Process.Kill()
			<-exited
		}
		return endpoint, cmd.Process, stop, nil
	}
}

// WaitHTTP waits until url answers HTTP (any status), the process exits
// (exited), or the time is up.
func WaitHTTP(url string, exited <-chan error, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("no answer in time")
		}
	}
}

// GCS starts fake-gcs-server, and points the Cloud Storage client at it
// for the test (STORAGE_EMULATOR_HOST: gocloud.dev then connects without
// credentials).
func GCS(t *testing.T) *Server {
	t.Helper()
	bin := Find(t, "FEEDGEN_FAKE_GCS_SERVER", "fake-gcs-server", "fake-gcs-server-*/fake-gcs-server")
	root := t.TempDir()
	endpoint, _ := Start(t, "fake-gcs-server", func(port string) *exec.Cmd {
		return exec.Command(bin, "-scheme", "http", "-host", "127.0.0.1", "-port", port, "-backend", "filesystem",
			"-filesystem-root", root, "-public-host", "127.0.0.1:"+port, "-log-level", "error")
	})
	t.Setenv("STORAGE_EMULATOR_HOST", endpoint)
	return &Server{
		Endpoint: endpoint,
		n:        new(atomic.Int64),
		make: func(t *testing.T, name string) {
			body := strings.NewReader(`{"name":"` + name + `"}`)
			resp, err := http.Post("http://"+endpoint+"/storage/v1/b?project=test", "application/json", body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("making bucket %s: %s", name, resp.Status)
			}
		},
		url: func(name string) string { return "gs://" + name },
	}
}

// The well-known account of Azurite.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteCommand returns how to run Azurite's blob service, bin, on a
// port, in memory, with its debug log, if any, in folder dir.
func azuriteCommand(bin, dir string) func(port string) *exec.Cmd {
	return func(port string) *exec.Cmd {
		cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", port, "--inMemoryPersistence", "--silent",
			"--skipApiVersionCheck", "--loose")
		cmd.Dir = dir
		return cmd
	}
}

// azurite sets the Azure environment of the test for the Azurite at
// endpoint, and returns it, counting its buckets in n.
func azurite(t *testing.T, endpoint string, n *atomic.Int64) *Server {
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": azuriteAccount, "AZURE_STORAGE_KEY": azuriteKey, "AZURE_STORAGE_IS_LOCAL_EMULATOR": "true",
		"AZURE_STORAGE_DOMAIN": endpoint, "AZURE_STORAGE_PROTOCOL": "http", "AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": "",
	} {
		t.Setenv(k, v)
	}
	service := "http://" + endpoint + "/" + azuriteAccount
	return &Server{
		Endpoint: endpoint,
		n:        n,
		make: func(t *testing.T, name string) {
			cred, err := azblob.NewSharedKeyCredential(azuriteAccount, azuriteKey)
			if err != nil {
				t.Fatal(err)
			}
			client, err := azblob.NewClientWithSharedKeyCredential(service, cred, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.CreateContainer(context.Background(), name, nil); err != nil {
				t.Fatalf("making container %s: %v", name, err)
			}
		},
		// The endpoint in the URL: gocloud.dev reads the environment once
		// a process.
		url: func(name string) string {
			return "azblob://" + name + "?localemu=true&protocol=http&domain=" + endpoint
		},
	}
}

// Shared keeps one Azurite for the tests of a package that publish to it
// (each makes buckets of its own): started when the first asks, stopped
// by Close, which the package's TestMain calls. Azurite takes some 3 s to
// start (node); fake-gcs-server and versitygw, a tenth of that, a test
// starts for itself (GCS, versitytest.Start), so that it may stop one.
type Shared struct {
	mu       sync.Mutex
	endpoint string // of the shared Azurite, "" before it starts
	dir      string // its folder
	buckets  atomic.Int64
	stop     func()
}

// Azurite returns the shared Azurite, started for the first test that
// asks, and sets the Azure environment of the test for it (the
// emulator's account and key; its address is in the URLs of its
// buckets). A test that finds no Azurite is skipped (Find).
func (s *Shared) Azurite(t *testing.T) *Server {
	t.Helper()
	bin := Find(t, "FEEDGEN_AZURITE", "azurite-blob", "npm/node_modules/.bin/azurite-blob")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endpoint == "" {
		dir, err := os.MkdirTemp("", "azurite-")
		if err != nil {
			t.Fatal(err)
		}
		endpoint, _, stop, err := start("azurite", azuriteCommand(bin, dir))
		if err != nil {
			os.RemoveAll(dir)
			t.Fatal(err)
		}
		s.endpoint, s.dir, s.stop = endpoint, dir, stop
	}
	return azurite(t, s.endpoint, &s.buckets)
}

// Close stops the shared emulators.
func (s *Shared) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop()
		os.RemoveAll(s.dir)
		s.stop, s.endpoint, s.dir = nil, "", ""
	}
}
