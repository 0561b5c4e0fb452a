// Package versitytest starts versitygw, an S3-compatible gateway over a
// folder (its posix backend), for tests that need a real S3 service: on a
// free port of 127.0.0.1, over temporary folders, stopped when the test
// ends.
package versitytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/publish/emulatortest"
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
// or the repository's .cache, where make installs it (see
// emulatortest.Find).
func Binary(t testing.TB) string {
	t.Helper()
	return emulatortest.Find(t, "FEEDGEN_VERSITYGW", "versitygw", "versitygw-*/versitygw")
}

// Start starts versitygw with its own IAM folder, and sets the AWS SDK's
// environment for the test (SetAWSEnv) with the root account's keys. It
// keeps connections open between requests, as S3 does (--keep-alive;
// without it, versitygw closes each one after its answer).
func Start(t *testing.T) *Server {
	t.Helper()
	s := &Server{Bin: Binary(t), Root: t.TempDir()}
	iam := t.TempDir()
	SetAWSEnv(t, Access, Secret)
	endpoint, p := emulatortest.Start(t, "versitygw", func(port string) *exec.Cmd {
		return exec.Command(s.Bin, "--access", Access, "--secret", Secret, "--port", "127.0.0.1:"+port,
			"--iam-dir", iam, "--keep-alive", "--quiet", "posix", s.Root)
	})
	s.Endpoint, s.Process = "http://"+endpoint, p
	return s
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
