package build

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestTmpProfile(t *testing.T) {
	dir := os.Getenv("SITE")
	if dir == "" {
		t.Skip()
	}
	os.RemoveAll(dir + "/public")
	start := time.Now()
	_, err := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(time.Since(start))
}
