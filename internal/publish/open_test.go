package publish

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen opens file:// BUCKET_URLs: a bucket folder that does not exist
// is made, and removed again after a publish that failed; a dry run makes
// nothing, and sees an empty temporary folder; a folder in the build is
// refused as a URL error.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "public")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		bucket string
		dryRun bool
		failed error // the publish's
		said   string
		exists bool // the bucket folder, once closed
		urlErr bool
	}{
		{"made, kept", "srv/a/feed", false, nil, "created " + filepath.Join(dir, "srv/a/feed") + "\n", true, false},
		{"made, removed", "srv/b/feed", false, errors.New("failed"), "", false, false},
		{"dry run", "srv/c/feed", true, nil, filepath.Join(dir, "srv/c/feed") + " does not exist: publish will create it\n", false, false},
		{"in the build", "public/feed", false, nil, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bucket := filepath.Join(dir, tt.bucket)
			var said strings.Builder
			opt := OpenOptions{OutputDir: out, Say: &said}
			opt.DryRun = tt.dryRun
			tg, err := Open(context.Background(), "file://"+bucket, opt)
			var ue *URLError
			if tt.urlErr {
				if !errors.As(err, &ue) {
					t.Fatalf("got %v, want a URL error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.dryRun != (tg.Folder != bucket) {
				t.Errorf("folder %s for %s (dry run %v)", tg.Folder, bucket, tt.dryRun)
			}
			if o := tg.Options(Options{}); o.Folder != tg.Folder || o.OutputDir != out {
				t.Errorf("options %+v", o)
			}
			tg.Close(tt.failed)
			if _, err := os.Stat(bucket); (err == nil) != tt.exists {
				t.Errorf("%s exists: %v, want %v", bucket, err == nil, tt.exists)
			}
			if tt.dryRun {
				if _, err := os.Stat(tg.Folder); err == nil {
					t.Errorf("the dry run's %s is left", tg.Folder)
				}
			}
			if !tt.exists {
				if _, err := os.Stat(filepath.Join(dir, "srv", tt.bucket[4:5])); err == nil {
					t.Errorf("a folder made for %s is left", bucket)
				}
			}
			if said.String() != tt.said {
				t.Errorf("said %q, want %q", said.String(), tt.said)
			}
		})
	}
}

// TestOpenReady checks that Open makes no bucket folder, and says
// nothing, before Options.Ready says the publish goes on: a publish
// --strict of a build older than its site touches nothing.
func TestOpenReady(t *testing.T) {
	dir := t.TempDir()
	no := errors.New("the site changed")
	for _, dryRun := range []bool{false, true} {
		bucket := filepath.Join(dir, "srv", "feed")
		var said strings.Builder
		opt := OpenOptions{OutputDir: filepath.Join(dir, "public"), Say: &said}
		opt.DryRun = dryRun
		opt.Ready = func() error {
			if _, err := os.Stat(filepath.Join(dir, "srv")); err == nil {
				t.Errorf("dry run %v: the bucket's folder was made before Ready", dryRun)
			}
			return no
		}
		if _, err := Open(context.Background(), "file://"+bucket, opt); !errors.Is(err, no) {
			t.Fatalf("dry run %v: got %v, want Ready's error", dryRun, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "srv")); err == nil {
			t.Errorf("dry run %v: %s made", dryRun, bucket)
		}
		if said.Len() > 0 {
			t.Errorf("dry run %v: said %q", dryRun, said.String())
		}
	}
	// A folder that exists is not made: Open does not wait for Ready,
	// which Publish calls once it read the build.
	bucket := filepath.Join(dir, "feed")
	if err := os.Mkdir(bucket, 0o755); err != nil {
		t.Fatal(err)
	}
	opt := OpenOptions{OutputDir: filepath.Join(dir, "public")}
	opt.Ready = func() error { t.Error("Open waited for Ready with a folder that exists"); return nil }
	tg, err := Open(context.Background(), "file://"+bucket, opt)
	if err != nil {
		t.Fatal(err)
	}
	tg.Close(nil)
}
