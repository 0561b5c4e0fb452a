package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

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

// TestFlagHabits runs every habit of flagHabits on every command of the
// tree that has the flag it means and not the one typed: a bad command
// line (exit 2) whose message says how to write it. Every habit must
// apply to some command, and the first habit of a flag that applies is
// the one shown.
func TestFlagHabits(t *testing.T) {
	used := make([]bool, len(flagHabits))
	for _, c := range commands() {
		path := strings.Fields(c.CommandPath())[1:]
		shown := map[string]bool{}
		for i, h := range flagHabits {
			if c.Flags().Lookup(h.ours) == nil || shown[strings.ToLower(h.flag)] || h.on != nil && !slices.Contains(h.on, c.Name()) {
				continue
			}
			if c.Flags().Lookup(strings.TrimLeft(h.flag, "-")) != nil || len(h.flag) == 2 && c.Flags().ShorthandLookup(h.flag[1:]) != nil {
				continue // the command has the flag: no habit to correct
			}
			shown[strings.ToLower(h.flag)], used[i] = true, true
			t.Run(c.CommandPath()+" "+h.flag, func(t *testing.T) {
				var stderr bytes.Buffer
				code := run(append(append(path, h.flag, "9000"), "x"), nil, io.Discard, &stderr, func(string) string { return "" })
				how := h.how
				if strings.Contains(how, "%[1]s") {
					how = fmt.Sprintf(how, "9000")
				}
				want := fmt.Sprintf("feedgen: %s: %s takes %s\n", unknownMsg(h.flag), c.CommandPath(), how)
				if code != exitUsage || !strings.HasPrefix(stderr.String(), want) {
					t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and\n%s", code, stderr.String(), want)
				}
			})
		}
	}
	for i, h := range flagHabits {
		if !used[i] {
			t.Errorf("flagHabits: %s meaning --%s applies to no command (none has --%s without %s, or an earlier habit of %s does)", h.flag, h.ours, h.ours, h.flag, h.flag)
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
		{[]string{"serve", "--port", "9000"}, "unknown flag: --port: feedgen serve takes --addr 127.0.0.1:9000 (host and port in one flag; --addr :9000 listens on every interface)"},
		{[]string{"serve", "--port=9001"}, "unknown flag: --port: feedgen serve takes --addr 127.0.0.1:9001 (host and port in one flag; --addr :9001 listens on every interface)"},
		{[]string{"serve", "--port"}, "unknown flag: --port: feedgen serve takes --addr 127.0.0.1:VALUE (host and port in one flag; --addr :VALUE listens on every interface)"},
		{[]string{"rules", "nginx", "-p", "8080"}, "unknown shorthand flag: 'p' in -p: feedgen rules takes --listen 8080 (a port, or host:port)"},
		{[]string{"build", "--destination", "/srv/www"}, "unknown flag: --destination: feedgen build takes --out /srv/www (-o)"},
		{[]string{"build", "-d", "dist"}, "unknown shorthand flag: 'd' in -d: feedgen build takes --out dist (-o; Hugo's -d is --destination, feedgen's -D is --drafts)"},
		{[]string{"serve", "--destination", "dist"}, "unknown flag: --destination: feedgen serve takes --dir dist (the build's folder)"},
		{[]string{"build", "--BaseURL", "https://staging.example.com"}, "unknown flag: --BaseURL: feedgen build takes --base-url https://staging.example.com"},
		{[]string{"build", "--buildDrafts"}, "unknown flag: --buildDrafts: feedgen build takes --drafts (-D)"},
		{[]string{"build", "--outt", "x"}, "unknown flag: --outt: did you mean --out?"},
		{[]string{"build", "--qiet"}, "unknown flag: --qiet: did you mean --quiet?"},
		{[]string{"serve", "--wath"}, "unknown flag: --wath: did you mean --watch?"},
		{[]string{"publish", "--max-delete", "9", "s3://b"}, "unknown flag: --max-delete: did you mean --max-deletes?"},
		{[]string{"import", "--worker", "2", "http://x/"}, "unknown flag: --worker: did you mean --workers?"},
		{[]string{"build", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"build", "-x"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"verify", "--port", "1", "f.zip"}, "unknown flag: --port"},
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
