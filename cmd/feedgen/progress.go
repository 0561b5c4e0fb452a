package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressDelay is how long a build runs before it shows a progress bar:
// short builds print only their summary.
const progressDelay = 500 * time.Millisecond

// progress shows a progress bar, of the pages written unless it says
// otherwise, on a terminal only, once the work has run for progressDelay.
type progress struct {
	w     io.Writer
	what  string // what is counted, e.g. "writing pages"
	tty   bool
	start time.Time
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
}

// newProgress returns the bar of the pages written.
func newProgress(w io.Writer) *progress { return newProgressOf(w, "writing pages") }

// newProgressOf returns a bar that counts what it says, e.g. "reading
// articles".
func newProgressOf(w io.Writer, what string) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, what: what, tty: ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

// Set reports done of total; it is called from several goroutines.
func (p *progress) Set(done, total int) {
	if !p.tty || time.Since(p.start) < progressDelay {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	p.bar.Set(done)
}

// Lines returns a writer of whole lines, for what is said while the bar
// may be shown: each clears the bar's line before it, and the bar is
// drawn again at its next update.
func (p *progress) Lines() io.Writer { return progressLines{p} }

type progressLines struct{ p *progress }

func (l progressLines) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.bar != nil {
		l.p.bar.Clear()
	}
	return l.p.w.Write(b)
}

// Close removes the bar, if one was shown.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
