// Package emulatortest starts the local stand-ins of two clouds' object
// storage for tests that publish to them: fake-gcs-server for gs:// and
// Azurite for azblob://, each on a free port of 127.0.0.1 over temporary
// folders, stopped when the test ends (versitytest, S3's, uses its Find
// and WaitHTTP). make test installs them, pinned, into .cache; without
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
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// Server is an emulator started for a test.
type Server struct {
	Endpoint string // 127.0.0.1:PORT
	n        int    // buckets made
	make     func(t *testing.T, name string)
	url      func(name string) string
}

// NewBucket makes an empty bucket and returns its URL. The store is ""
// (the emulators keep objects in their own formats).
func (s *Server) NewBucket(t *testing.T) (url, store string) {
	t.Helper()
	s.n++
	name := fmt.Sprintf("feed-%d", s.n)
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
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		var logs bytes.Buffer
		cmd := args(port)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		cmd.WaitDelay = 5 * time.Second // a child of node's may hold the pipes
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
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
			t.Fatalf("starting %s: %v\n%s", name, err, logs.String())
		}
		// Killed, not interrupted: what it holds is the test's and goes
		// with it, and Azurite, asked to stop, waits 5 s for the idle
		// connections of the clients (a second of make test in 5).
		t.Cleanup(func() {
			resume(cmd.Process) // one a test stopped
			cmd.Process.Kill()
			<-exited
		})
		return endpoint, cmd.Process
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

// Azurite starts Azurite's blob service, and sets the Azure environment
// of the test for it (the emulator's account and key; its address is in
// the URLs of its buckets).
func Azurite(t *testing.T) *Server {
	t.Helper()
	bin := Find(t, "FEEDGEN_AZURITE", "azurite-blob", "npm/node_modules/.bin/azurite-blob")
	endpoint, _ := Start(t, "azurite", func(port string) *exec.Cmd {
		cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", port, "--inMemoryPersistence", "--silent",
			"--skipApiVersionCheck", "--loose")
		cmd.Dir = t.TempDir() // its debug log, if any, goes there
		return cmd
	})
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": azuriteAccount, "AZURE_STORAGE_KEY": azuriteKey, "AZURE_STORAGE_IS_LOCAL_EMULATOR": "true",
		"AZURE_STORAGE_DOMAIN": endpoint, "AZURE_STORAGE_PROTOCOL": "http", "AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": "",
	} {
		t.Setenv(k, v)
	}
	service := "http://" + endpoint + "/" + azuriteAccount
	return &Server{
		Endpoint: endpoint,
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
		// a process, and each test has an Azurite of its own.
		url: func(name string) string {
			return "azblob://" + name + "?localemu=true&protocol=http&domain=" + endpoint
		},
	}
}
