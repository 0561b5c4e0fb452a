// Package versitytest starts versitygw, an S3-compatible gateway over a
// folder (its posix backend), for tests that need a real S3 service: on a
// free port of 127.0.0.1, over temporary folders, stopped when the test
// ends.
package versitytest

import (
	"bytes"
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
)

// The root account of the servers.
const (
	Access = "feedgentest"
	Secret = "feedgentestsecret"
)

// Server is a versitygw server started for a test.
type Server struct {
	Bin      string
	Endpoint string // http://127.0.0.1:PORT
	Root     string // the posix backend's folder: one folder per bucket
	// Process is the server's process: a test may stop it (SIGSTOP) to
	// see what a client does when the service stops answering.
	Process *os.Process
	n       int // buckets made
}

// Binary finds versitygw: $FEEDGEN_VERSITYGW (make test sets it), $PATH,
// or the repository's .cache, where make installs it. It skips the test
// when there is none, or fails it under FEEDGEN_RUNTIMES=required (make
// test).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FEEDGEN_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("FEEDGEN_VERSITYGW: %v", err)
		}
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if root := moduleRoot(); root != "" {
		if found, _ := filepath.Glob(filepath.Join(root, ".cache", "versitygw-*", "versitygw")); len(found) > 0 {
			slices.Sort(found)
			return found[len(found)-1]
		}
	}
	msg := "versitygw not found: set FEEDGEN_VERSITYGW, put it in $PATH, or run make test, which installs it into .cache"
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// moduleRoot is the folder of the go.mod above the current folder, or "".
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

// Start starts versitygw with its own IAM folder, and sets the AWS SDK's
// environment for the test (SetAWSEnv) with the root account's keys.
func Start(t *testing.T) *Server {
	t.Helper()
	s := &Server{Bin: Binary(t), Root: t.TempDir()}
	iam := t.TempDir()
	SetAWSEnv(t, Access, Secret)
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s.Endpoint = "http://127.0.0.1:" + port
		var logs bytes.Buffer
		cmd := exec.Command(s.Bin, "--access", Access, "--secret", Secret, "--port", "127.0.0.1:"+port,
			"--iam-dir", iam, "--quiet", "posix", s.Root)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if err := waitHTTP(s.Endpoint, exited, 15*time.Second); err != nil {
			cmd.Process.Kill()
			<-exited
			if attempt < 3 && strings.Contains(logs.String(), "address already in use") {
				continue // another process took the port
			}
			t.Fatalf("starting versitygw: %v\n%s", err, logs.String())
		}
		s.Process = cmd.Process
		t.Cleanup(func() {
			resume(cmd.Process)
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		})
		return s
	}
}

// SetAWSEnv sets the AWS SDK's environment for the test: these keys
// (empty: none), no shared config or credentials files, no EC2 metadata
// service.
func SetAWSEnv(t *testing.T, access, secret string) {
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func FreePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// waitHTTP waits until url answers HTTP (any status), the process exits,
// or the time is up.
func waitHTTP(url string, exited <-chan error, timeout time.Duration) error {
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
			return fmt.Errorf("versitygw exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("versitygw did not answer in time")
		}
	}
}

// BucketURL returns the s3:// URL of the bucket name on the server.
func (s *Server) BucketURL(name string) string {
	return "s3://" + name + "?endpoint=" + s.Endpoint + "&use_path_style=true&region=us-east-1"
}

// NewBucket makes an empty bucket (a folder of the posix backend) and
// returns its URL and folder.
func (s *Server) NewBucket(t *testing.T) (url, dir string) {
	t.Helper()
	s.n++
	name := fmt.Sprintf("feed-%d", s.n)
	dir = filepath.Join(s.Root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return s.BucketURL(name), dir
}

// AddUser makes an account of the role "user", which may not touch the
// root account's buckets.
func (s *Server) AddUser(t *testing.T, access, secret string) {
	t.Helper()
	out, err := exec.Command(s.Bin, "admin", "--access", Access, "--secret", Secret, "--endpoint-url", s.Endpoint,
		"create-user", "--access", access, "--secret", secret, "--role", "user").CombinedOutput()
	if err != nil {
		t.Fatalf("versitygw admin create-user: %v\n%s", err, out)
	}
}
