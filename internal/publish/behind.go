package publish

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
)

// Changes is how a site differs from what its build was made of, as
// build.Compare tells it (publish, which moves a build, does not import
// the package that makes one: the caller gives Behind its Compare).
type Changes struct {
	Config  bool      // the config file changed
	Content bool      // an article file was added, deleted, moved or changed
	Due     time.Time // when a scheduled article the build left out came due
}

// Any reports whether a build now would differ from the one compared.
func (c Changes) Any() bool { return c.Config || c.Content || !c.Due.IsZero() }

// Behind says how a build may be older than its site.
type Behind struct {
	// Compare tells how the site differs from the build of manifest m.
	Compare func(ctx context.Context, m *manifest.Manifest) (Changes, error)
	// ContentDir and ConfigFile are the site's, Dir the build's: named
	// relative to WorkDir when under it.
	ContentDir, ConfigFile, Dir, WorkDir string
	// Rebuild is the command that builds the site again.
	Rebuild string
	// Strict makes a build older than its site an error: nothing is
	// published. Else Warn is told.
	Strict bool
	Warn   io.Writer
}

// Start compares, in the background (a stat of every article file:
// seconds at a million), the build in output with its site. wait waits
// for that, then says on b.Warn when the site changed since the build
// was made (content, config, a scheduled article now due): publish
// uploads the build as it is, and says nothing else of it; with Strict,
// wait returns that as an error. A build whose manifest cannot be read
// is not compared: Publish says what is wrong with it. wait may be
// called more than once, and gives the same answer, said once. stop,
// for a caller that does not wait, ends the comparison and says
// nothing. Call one of them.
func (b Behind) Start(ctx context.Context, output fs.FS) (wait func() error, stop func()) {
	type result struct {
		m   *manifest.Manifest
		ch  Changes
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan result, 1)
	go func() {
		var r result
		data, err := fs.ReadFile(output, manifest.Name)
		if err == nil {
			// The head alone: Publish reads the whole manifest meanwhile.
			r.m, err = manifest.ParseHead(data)
		}
		if err == nil {
			r.ch, r.err = b.Compare(ctx, r.m)
		}
		done <- r
	}()
	wait = sync.OnceValue(func() error {
		defer cancel()
		r := <-done
		if r.m == nil || r.err != nil || !r.ch.Any() {
			return r.err
		}
		return b.say(r.m, r.ch)
	})
	stop = func() {
		cancel()
		<-done
	}
	return wait, stop
}

// say says, or with Strict returns, that the build of m is older than
// its site by ch.
func (b Behind) say(m *manifest.Manifest, ch Changes) error {
	var what []string
	if ch.Content {
		what = append(what, relTo(b.WorkDir, b.ContentDir)+"/")
	}
	if ch.Config {
		what = append(what, relTo(b.WorkDir, b.ConfigFile))
	}
	var why string
	if len(what) > 0 {
		why = strings.Join(what, " and ") + " changed"
	}
	if !ch.Due.IsZero() {
		if why != "" {
			why += ", and "
		}
		why += "an article scheduled for " + ch.Due.UTC().Format("2006-01-02 15:04:05 UTC") + " came due"
	}
	since := fmt.Sprintf("%s since %s/ was built (%s)", why, relTo(b.WorkDir, b.Dir), m.BuildTime.UTC().Format("2006-01-02 15:04:05 UTC"))
	if b.Strict {
		return fmt.Errorf("%s: --strict publishes only a build of the site as it is, and nothing was published; run %s first, then publish", since, b.Rebuild)
	}
	fmt.Fprintf(b.Warn, "warning: %s: this publishes the old build; run %s first, then publish\n", since, b.Rebuild)
	return nil
}

// relTo returns path p relative to dir when it is under it, else p.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); dir != "" && err == nil && filepath.IsLocal(r) {
		return r
	}
	return p
}
