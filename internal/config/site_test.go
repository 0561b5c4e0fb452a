package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestFind finds a site's config as the commands do: --config as a file
// or a folder, else config.yaml here or above, named as the user would
// write it; none, or a --config that is not there, is said.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "site", FileName), minimal+"output_dir: out\n")
	if err := os.MkdirAll(filepath.Join(dir, "site", "content", "news"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "apart"), 0o755); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "site")
	tests := []struct {
		name    string
		flag    string
		given   bool
		cwd     string
		path    string // "" for not found
		wantErr string
	}{
		{name: "here", cwd: site, path: FileName},
		{name: "above", cwd: filepath.Join(site, "content", "news"), path: filepath.Join("..", "..", FileName)},
		{name: "none", cwd: filepath.Join(dir, "apart")},
		{name: "given file", flag: filepath.Join(site, FileName), given: true, cwd: dir, path: filepath.Join(site, FileName)},
		{name: "given folder", flag: site, given: true, cwd: dir, path: filepath.Join(site, FileName)},
		{name: "given relative to cwd", flag: "site", given: true, cwd: dir, path: filepath.Join("site", FileName)},
		{name: "given, not a site", flag: filepath.Join(dir, "apart"), given: true, cwd: site,
			wantErr: "reading config " + filepath.Join(dir, "apart", FileName) + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, found, err := Find(tt.flag, tt.given, tt.cwd)
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
			case err != nil || found != (tt.path != "") || path != tt.path:
				t.Errorf("Find = %q, %v, %v; want %q", path, found, err, tt.path)
			}
		})
	}
}

// TestFindSite reads the config it finds, its paths resolved against its
// folder; ErrNoSite when there is none.
func TestFindSite(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "site", FileName), minimal+"output_dir: out\n")
	cfg, err := FindSite("", false, filepath.Join(dir, "site"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "out"; cfg.Path != FileName || cfg.OutputDir != want {
		t.Errorf("Path %q, OutputDir %q; want %q, %q (relative to cwd, as found)", cfg.Path, cfg.OutputDir, FileName, want)
	}
	if _, err := FindSite("", false, dir); !errors.Is(err, ErrNoSite) {
		t.Errorf("no site: %v, want ErrNoSite", err)
	}
	testfiles.WriteFile(t, filepath.Join(dir, "bad", FileName), "site_url: [\n")
	if _, err := FindSite(filepath.Join(dir, "bad"), true, dir); err == nil {
		t.Error("a config that does not parse: no error")
	}
}
