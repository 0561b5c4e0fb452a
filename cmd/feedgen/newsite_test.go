package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestNewSiteFileServer follows what feedgen rules says to a chunks
// build that asks for a target mapping requests onto files: the keys of
// pagination it says to set, set in the config whatever its style (a new
// site's block style; flow style with default_limit 10 and max_limit 50),
// and the commands it says to run, run as written (with --config and
// --root given, they name them), make a build that the target takes.
func TestNewSiteFileServer(t *testing.T) {
	tests := []struct {
		name   string
		config string // replaces the new site's pagination: block, "" keeps it
		dir    string // where rules runs: "site" or "" (the site's parent)
		args   []string
	}{
		{name: "new site", dir: "site"},
		{name: "flow style, --root", config: "pagination: {default_limit: 10, max_limit: 50, layout: chunks}\n",
			args: []string{"--config", "mysite", "--root", "served"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			site := filepath.Join(root, "mysite")
			if r := runFeedgen(t, root, nil, "new", "site", site); r.code != 0 {
				t.Fatal(r.stderr)
			}
			name := filepath.Join(site, "config.yaml")
			if tt.config != "" {
				cfg, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				before, after, ok := strings.Cut(string(cfg), "pagination:\n  default_limit: 20\n  max_limit: 100\n  layout: chunks\n")
				if !ok {
					t.Fatalf("config.yaml of a new site has no pagination block:\n%s", cfg)
				}
				if err := os.WriteFile(name, []byte(before+tt.config+after), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir := root
			if tt.dir == "site" {
				dir = site
			}
			build := []string{"build", "-q"}
			if len(tt.args) > 0 {
				build = append(build, "--config", "mysite", "--out", "served")
			}
			if r := runFeedgen(t, dir, nil, build...); r.code != 0 {
				t.Fatal(r.stderr)
			}
			for _, target := range []string{"caddy", "apache", "cloudfront", "nginx"} {
				r := runFeedgen(t, dir, nil, append([]string{"rules", target, "-o", "deploy"}, tt.args...)...)
				if r.code != 1 {
					t.Fatalf("rules %s of a chunks build: exit %d, want 1\n%s", target, r.code, r.stderr)
				}
				keys, commands := followPagesAdvice(t, r.stderr)
				if target != "nginx" {
					continue
				}
				// nginx is told the nginx-njs command, with the flags
				// given, that serves the chunks build as it is.
				m := njsAdvice.FindStringSubmatch(r.stderr)
				if m == nil {
					t.Fatalf("rules nginx does not give the nginx-njs command:\n%s", r.stderr)
				}
				if r := runFeedgen(t, dir, nil, strings.Fields(m[1])[1:]...); r.code != 0 {
					t.Fatalf("%s: exit %d\n%s", m[1], r.code, r.stderr)
				}
				setPagination(t, name, keys)
				for _, c := range commands {
					if r := runFeedgen(t, dir, nil, c[1:]...); r.code != 0 {
						t.Fatalf("%s after the change: exit %d\n%s", strings.Join(c, " "), r.code, r.stderr)
					}
				}
			}
		})
	}
}

var (
	adviceKey = regexp.MustCompile(`pagination\.(\w+): (\[[^]]*\]|\w+)`)
	njsAdvice = regexp.MustCompile(`(?m)^to keep layout: chunks, nginx puts its pages together with its JavaScript module \(Debian: libnginx-mod-http-js\): run (feedgen rules nginx-njs .*)$`)
	adviceRun = regexp.MustCompile(`; then run (feedgen build[^;]*?) and (feedgen rules .*) again$`)
)

// followPagesAdvice reads the last line of what rules says to a chunks
// build: the keys of pagination it names and the commands to run after.
func followPagesAdvice(t *testing.T, stderr string) (keys map[string]string, commands [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	keys = map[string]string{}
	for _, m := range adviceKey.FindAllStringSubmatch(last, -1) {
		keys[m[1]] = m[2]
	}
	m := adviceRun.FindStringSubmatch(last)
	if len(lines) < 2 || keys["layout"] != "pages" || keys["limits"] == "" || keys["offsets"] == "" || m == nil {
		t.Fatalf("rules does not say what to set and what to run:\n%s", stderr)
	}
	return keys, [][]string{strings.Fields(m[1]), strings.Fields(m[2])}
}

// setPagination sets keys of pagination in the config file name, as a
// user would with an editor: the values of the keys it has, the others
// added, the rest of the file as it was.
func setPagination(t *testing.T, name string, keys map[string]string) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	var p *yaml.Node
	for i := 0; i < len(top.Content); i += 2 {
		if top.Content[i].Value == "pagination" {
			p = top.Content[i+1]
		}
	}
	if p == nil {
		t.Fatalf("%s has no pagination", name)
	}
	for k, v := range keys {
		var val yaml.Node
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			t.Fatal(err)
		}
		set := false
		for i := 0; i < len(p.Content); i += 2 {
			if p.Content[i].Value == k {
				p.Content[i+1], set = val.Content[0], true
			}
		}
		if !set {
			p.Content = append(p.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, val.Content[0])
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
