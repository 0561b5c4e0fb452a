package syndication

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// TestGolden compares the feeds of feedCases, in every format, with
// testdata/golden (rewritten by -update): the exact bytes, also where
// Django is not installed to compare RSS and Atom with (TestDjango).
func TestGolden(t *testing.T) {
	for i, c := range feedCases() {
		for _, f := range Formats() {
			name := filepath.Join("testdata", "golden", fmt.Sprintf("%d-%s", i, f.File))
			got := f.Append(nil, &c.ch, c.it)
			if *update {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s:\n got %s\nwant %s", name, got, want)
			}
		}
	}
}

// TestJSONFeed checks the JSON Feed of every case against the JSON Feed
// 1.1 specification (https://www.jsonfeed.org/version/1.1/): each
// required field there, of the type it says, every optional one present
// of its type, and the serialization SPEC §13 asks for (no spaces
// outside strings, keys in its order).
func TestJSONFeed(t *testing.T) {
	rfc3339 := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$`)
	for i, c := range feedCases() {
		b := AppendJSON(nil, &c.ch, c.it)
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatalf("case %d: not JSON: %v\n%s", i, err, b)
		}
		if !bytes.Equal(compact.Bytes(), b) {
			t.Errorf("case %d: spaces outside strings:\n%s", i, b)
		}
		var feed struct {
			Version     *string `json:"version"`
			Title       *string `json:"title"`
			HomePageURL *string `json:"home_page_url"`
			FeedURL     *string `json:"feed_url"`
			Description *string `json:"description"`
			Language    *string `json:"language"`
			Items       *[]struct {
				ID            *string `json:"id"`
				URL           *string `json:"url"`
				Title         *string `json:"title"`
				ContentText   *string `json:"content_text"`
				ContentHTML   *string `json:"content_html"`
				Image         *string `json:"image"`
				DatePublished *string `json:"date_published"`
				Authors       *[]struct {
					Name *string `json:"name"`
					URL  *string `json:"url"`
				} `json:"authors"`
				Tags *[]string `json:"tags"`
			} `json:"items"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&feed); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, b)
		}
		switch {
		case feed.Version == nil || *feed.Version != "https://jsonfeed.org/version/1.1":
			t.Errorf("case %d: version %v", i, feed.Version)
		case feed.Title == nil || *feed.Title != c.ch.Title:
			t.Errorf("case %d: title", i)
		case feed.HomePageURL == nil || feed.FeedURL == nil || feed.Description == nil || feed.Language == nil:
			t.Errorf("case %d: home_page_url, feed_url, description or language missing", i)
		case feed.Items == nil || len(*feed.Items) != len(c.it):
			t.Fatalf("case %d: items", i)
		}
		for j, it := range *feed.Items {
			want := c.it[j]
			if it.ID == nil || *it.ID == "" {
				t.Errorf("case %d item %d: no id (required)", i, j)
			}
			if it.ContentText == nil && it.ContentHTML == nil {
				t.Errorf("case %d item %d: neither content_text nor content_html (one is required)", i, j)
			}
			if it.DatePublished == nil || !rfc3339.MatchString(*it.DatePublished) {
				t.Errorf("case %d item %d: date_published %v, want RFC 3339", i, j, it.DatePublished)
			} else if d, err := time.Parse(time.RFC3339, *it.DatePublished); err != nil || !d.Equal(djangoTime(want.Published)) {
				t.Errorf("case %d item %d: date_published %s, want %s", i, j, *it.DatePublished, want.Published)
			}
			if it.Authors == nil || len(*it.Authors) != 1 || (*it.Authors)[0].Name == nil {
				t.Errorf("case %d item %d: authors %v", i, j, it.Authors)
			}
			if (it.Image != nil) != (want.Image != "") || (it.Tags != nil) != (len(want.Categories) > 0) {
				t.Errorf("case %d item %d: image or tags present when empty, or missing", i, j)
			}
		}
	}
}

// TestModified reads back from each feed of feedCases the date Latest
// gave when it was written, in every format.
func TestModified(t *testing.T) {
	for i, c := range feedCases() {
		want := Latest(c.it)
		for _, f := range Formats() {
			got, err := Modified(f, f.Append(nil, &c.ch, c.it))
			if err != nil || !got.Equal(want) {
				t.Errorf("case %d %s: %v, %v; want %v", i, f.Name, got, err, want)
			}
		}
	}
}
