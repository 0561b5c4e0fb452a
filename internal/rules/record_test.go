package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSaveRecord keeps one record per folder and target: a folder may
// hold the files of several targets.
func TestSaveRecord(t *testing.T) {
	name := filepath.Join(t.TempDir(), RecordsName)
	for _, r := range []Record{
		{Target: "nginx", Out: "/b", Listen: "80"},
		{Target: "caddy", Out: "/a"},
		{Target: "caddy", Out: "/b"},
		{Target: "nginx", Out: "/b", Listen: "8080"},
	} {
		if dropped, err := SaveRecord(name, r); err != nil || dropped != nil {
			t.Fatal(dropped, err)
		}
	}
	rs, err := ReadRecords(name)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Target+" "+r.Out+" "+r.Listen)
	}
	if want := "caddy /a ,caddy /b ,nginx /b 8080"; strings.Join(got, ",") != want {
		t.Errorf("records %q, want %q", got, want)
	}
}

// TestSaveRecordConcurrent saves records of many folders at once, as
// feedgen rules run in parallel (make -j) do: none is lost.
func TestSaveRecordConcurrent(t *testing.T) {
	name := filepath.Join(t.TempDir(), RecordsName)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := SaveRecord(name, Record{Target: "nginx", Out: fmt.Sprintf("/out/%02d", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rs, err := ReadRecords(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != n {
		t.Errorf("%d records of %d saved at once", len(rs), n)
	}
}

// TestRecordMoved keeps the paths inside the record's folder relative
// to it: the site moved (or checked out elsewhere, in CI) keeps its
// records; those outside stay absolute.
func TestRecordMoved(t *testing.T) {
	top := t.TempDir()
	site := filepath.Join(top, "site")
	if err := os.Mkdir(site, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(site, RecordsName)
	r := Record{Target: "nginx", Out: filepath.Join(site, "deploy", "nginx"), Root: filepath.Join(site, "public"), Modules: "/usr/lib/nginx/modules"}
	if _, err := SaveRecord(name, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"out": "deploy/nginx"`, `"root": "public"`, `"modules": "/usr/lib/nginx/modules"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the record has no %s:\n%s", want, data)
		}
	}
	moved := filepath.Join(top, "moved")
	if err := os.Rename(site, moved); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadRecords(filepath.Join(moved, RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := FindRecord(rs, filepath.Join(moved, "deploy", "nginx"), "nginx"); !ok || rs[0].Root != filepath.Join(moved, "public") || rs[0].Modules != r.Modules {
		t.Errorf("moved, the records are %+v", rs)
	}
}

// TestCorruptRecord says where a record file is wrong, and SaveRecord
// writes it again, saying what it dropped.
func TestCorruptRecord(t *testing.T) {
	name := filepath.Join(t.TempDir(), RecordsName)
	if err := os.WriteFile(name, []byte("{\n  \"rules\": [\n    {\"target\": \"nginx\",}\n  ]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadRecords(name)
	var ce *CorruptRecordsError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), name+":3: ") {
		t.Fatalf("got %v, want %s:3: ...", err, name)
	}
	dropped, err := SaveRecord(name, Record{Target: "caddy", Out: "/a"})
	if err != nil || dropped == nil {
		t.Fatalf("saving over a corrupt record: dropped %v, %v", dropped, err)
	}
	if rs, err := ReadRecords(name); err != nil || len(rs) != 1 {
		t.Errorf("written again: %+v, %v", rs, err)
	}
}

// TestCheckRecordsGone forgets the record of a folder that is gone,
// once, and says so.
func TestCheckRecordsGone(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, RecordsName)
	kept, gone := filepath.Join(dir, "kept"), filepath.Join(dir, "gone")
	for _, out := range []string{kept, gone} {
		tg, _ := Find("caddy")
		s, err := NewSite(sampleMan, sampleRoot, "8080")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Write(tg, s, out, false); err != nil {
			t.Fatal(err)
		}
		if _, err := SaveRecord(name, Record{Target: "caddy", Out: out, Root: sampleRoot, Listen: "8080", Counts: Counts(sampleMan.Collections)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		checks, err := CheckRecords(name, sampleRoot, sampleMan, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(checks) != want || (want == 1 && (!checks[0].Gone || checks[0].Record.Out != gone)) {
			t.Errorf("check %d: %+v, want %d gone", i, checks, want)
		}
	}
	if rs, _ := ReadRecords(name); len(rs) != 1 || rs[0].Out != kept {
		t.Errorf("records %+v, want only %s", rs, kept)
	}
}
