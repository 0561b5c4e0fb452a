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

// progress shows a progress bar of the pages written, on a terminal only,
// once a build has run for progressDelay.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

// Set reports done of total pages; it is called from several goroutines.
func (p *progress) Set(done, total int) {
	if !p.tty || time.Since(p.start) < progressDelay {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription("writing pages"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	p.bar.Set(done)
}

// Close removes the bar, if one was shown.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
