// Package djangotest finds, for tests, the Python that has Django 3.2:
// the reference the reader feeds are compared with (SPEC §13).
package djangotest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python returns a python3 that imports Django 3.2: Debian's first (a
// python3 earlier in $PATH, pyenv's say, may not have the package). Without
// one it skips the test, or fails it under FEEDGEN_RUNTIMES=required.
func Python(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import django, sys; sys.exit(django.VERSION[:2] != (3, 2))").Run() == nil {
			return path
		}
	}
	msg := "no python3 with Django 3.2 (Debian 12's python3-django; make test installs it)"
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Run runs the Python script with Django (see Python), in as JSON on its
// standard input, and decodes its standard output, JSON, into out.
func Run(t testing.TB, script string, in, out any) {
	t.Helper()
	python := Python(t)
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script)
	cmd.Stdin = bytes.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}
