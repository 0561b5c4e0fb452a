package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/habit"
	"github.com/spf13/cobra"
)

// commands returns the commands of feedgen's command tree, root first.
func commands() []*cobra.Command {
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&globalOptions{stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv, version: "dev"}))
	return all
}

// TestFlagHabits checks, command by command, what each habit of
// flagHabits says where it applies, and that a habit says nothing where
// the command has no flag it means (or the habit is for other commands):
// a bad command line (exit 2) with that message. Every habit must be
// shown by some case.
func TestFlagHabits(t *testing.T) {
	const (
		addr   = "--addr 9000 (a port, or host:port)"
		root   = "--dir 9000 (the build's folder, as the platform sees it)"
		config = "--config 9000 (the site's folder, or its config.yaml)"
		out    = "--out 9000 (-o)"
	)
	tests := []struct {
		cmd  string // the command and its arguments; the flag and 9000 go after it
		flag string
		how  string // what the command takes; "" for no hint
	}{
		{"build", "--destination", out},
		{"build", "-d", "--out 9000 (-o; Hugo's -d is --destination, feedgen's -D is --drafts)"},
		{"build", "--source", config},
		{"build", "-s", config},
		{"build", "--buildDrafts", "--drafts (-D)"},
		{"build", "--buildFuture", "--future"},
		{"build", "-F", "--future"},
		{"build", "--baseURL", "--base-url 9000"},
		{"build", "--baseurl", "--base-url 9000"},
		{"build", "--cleanDestinationDir", "--clean"},
		{"build", "--port", ""},
		{"build", "--renderToDisk", ""},
		{"build", "--dryrun", ""},

		{"serve", "--port", addr},
		{"serve", "-p", addr},
		{"serve", "--bind", "--addr 9000:8080 (host and port in one flag)"},
		{"serve", "--host", "--addr 9000:8080 (host and port in one flag)"},
		{"serve", "--listen", addr},
		{"serve", "--destination", "--dir 9000 (the build's folder)"},
		{"serve", "--renderToDisk", "--out DIR (with --watch: the preview's pages are written there too)"},
		{"serve", "--source", config},
		{"serve", "-s", config},
		{"serve", "--buildDrafts", "--drafts (-D)"},
		{"serve", "--buildFuture", "--future"},
		{"serve", "-F", "--future"},

		{"bundle", "--destination", "--out 9000 (-o: the archive to write)"},
		{"bundle", "--source", "--dir 9000 (the build's folder)"},
		{"bundle", "-s", config},
		{"bundle", "--port", ""},

		{"publish s3://b", "--destination", "the bucket as its argument, feedgen publish BUCKET_URL (and the build's folder as --dir)"},
		{"publish s3://b", "--source", "--dir 9000 (the build's folder)"},
		{"publish s3://b", "-s", config},
		{"publish s3://b", "--dryrun", "--dry-run (-n)"},
		{"publish s3://b", "--output", ""},

		{"rules nginx", "--port", addr},
		{"rules nginx", "-p", addr},
		{"rules nginx", "--bind", "--addr 9000:80 (a port, or host:port)"},
		{"rules nginx", "--destination", root},
		{"rules nginx", "--source", config},
		{"rules nginx", "-s", config},

		{"import http://x/", "--destination", out},
		{"import http://x/", "-d", "--out 9000 (-o; Hugo's -d is --destination, feedgen's -D is --drafts)"},
		{"import http://x/", "--source", ""},

		{"new article news/general/x", "--source", config},
		{"new site x", "--destination", ""},
		{"verify f.zip", "--port", ""},
	}
	habits := habit.Flags()
	shown := make([]bool, len(habits))
	for _, tt := range tests {
		args := append(strings.Fields(tt.cmd), tt.flag, "9000")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(args, nil, io.Discard, &stderr, func(string) string { return "" })
			path := "feedgen " + strings.Join(strings.Fields(tt.cmd)[:1], " ")
			if strings.HasPrefix(tt.cmd, "new ") {
				path = "feedgen " + strings.Join(strings.Fields(tt.cmd)[:2], " ")
			}
			want := "feedgen: " + unknownMsg(tt.flag)
			if tt.how != "" {
				want += ": " + path + " takes " + tt.how
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if code != exitUsage || first != want {
				t.Errorf("exit %d, %s\nwant exit 2, %s", code, first, want)
			}
		})
		for i, h := range habits {
			how := h.How
			if strings.Contains(how, "%[1]s") {
				how = fmt.Sprintf(how, "9000")
			}
			if habit.SameFlag(h.Flag, tt.flag) && how == tt.how {
				shown[i] = true
			}
		}
	}
	for i, h := range habits {
		if !shown[i] {
			t.Errorf("habit.Flags: %s meaning --%s is shown by no case", h.Flag, h.Ours)
		}
	}
}

// unknownMsg is pflag's message for the unknown flag f.
func unknownMsg(f string) string {
	if len(f) == 2 {
		return fmt.Sprintf("unknown shorthand flag: '%c' in %s", f[1], f)
	}
	return "unknown flag: " + f
}

// TestFlagHints checks the messages of unknown flags as a user sees
// them: the habit with the value given, a close flag of the command, or
// nothing to suggest.
func TestFlagHints(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--port", "9000"}, "unknown flag: --port: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "--port=9001"}, "unknown flag: --port: feedgen serve takes --addr 9001 (a port, or host:port)"},
		{[]string{"serve", "--port"}, "unknown flag: --port: feedgen serve takes --addr VALUE (a port, or host:port)"},
		{[]string{"rules", "nginx", "-p", "8080"}, "unknown shorthand flag: 'p' in -p: feedgen rules takes --addr 8080 (a port, or host:port)"},
		{[]string{"serve", "-p9000"}, "unknown shorthand flag: 'p' in -p9000: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "-p=9000"}, "unknown shorthand flag: 'p' in -p=9000: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "-Dp", "9000"}, "unknown shorthand flag: 'p' in -p: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "-Dp9000"}, "unknown shorthand flag: 'p' in -p9000: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "-d", "public", "-wp", "9000"}, "unknown shorthand flag: 'p' in -p: feedgen serve takes --addr 9000 (a port, or host:port)"},
		{[]string{"serve", "-p"}, "unknown shorthand flag: 'p' in -p: feedgen serve takes --addr VALUE (a port, or host:port)"},
		{[]string{"build", "--destination", "/srv/www"}, "unknown flag: --destination: feedgen build takes --out /srv/www (-o)"},
		{[]string{"build", "-d", "dist"}, "unknown shorthand flag: 'd' in -d: feedgen build takes --out dist (-o; Hugo's -d is --destination, feedgen's -D is --drafts)"},
		{[]string{"serve", "--destination", "dist"}, "unknown flag: --destination: feedgen serve takes --dir dist (the build's folder)"},
		{[]string{"build", "--BaseURL", "https://staging.example.com"}, "unknown flag: --BaseURL: feedgen build takes --base-url https://staging.example.com"},
		{[]string{"build", "--buildDrafts"}, "unknown flag: --buildDrafts: feedgen build takes --drafts (-D)"},
		{[]string{"build", "--outt", "x"}, "unknown flag: --outt: did you mean --out?"},
		{[]string{"build", "--output", "x"}, "unknown flag: --output: did you mean --out?"},
		{[]string{"serve", "--output", "x"}, "unknown flag: --output: did you mean --out?"},
		{[]string{"build", "--qiet"}, "unknown flag: --qiet: did you mean --quiet?"},
		{[]string{"serve", "--wath"}, "unknown flag: --wath: did you mean --watch?"},
		{[]string{"publish", "--max-delete", "9", "s3://b"}, "unknown flag: --max-delete: did you mean --max-deletes?"},
		{[]string{"import", "--worker", "2", "http://x/"}, "unknown flag: --worker: did you mean --workers?"},
		{[]string{"build", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"build", "-x"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"verify", "--port", "1", "f.zip"}, "unknown flag: --port"},
		{[]string{"build", "--port", "1"}, "unknown flag: --port"}, // not --out: two edits, in four letters
		{[]string{"build", "--sampel"}, "unknown flag: --sampel: did you mean --sample?"},
		{[]string{"publish", "--fll", "s3://b"}, "unknown flag: --fll: did you mean --full?"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(tt.args, nil, io.Discard, &stderr, func(string) string { return "" })
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if code != exitUsage || first != "feedgen: "+tt.want {
				t.Errorf("exit %d, %s\nwant exit 2, feedgen: %s", code, first, tt.want)
			}
		})
	}
}
