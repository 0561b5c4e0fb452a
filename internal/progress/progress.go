// Package progress shows a progress bar on a terminal, for work that
// runs long enough to need one (a build writing pages, an import reading
// articles, a publish): nothing elsewhere, or for short work.
package progress

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

// Bar shows a progress bar, of the pages written unless it says
// otherwise, on a terminal only, once the work has run for progressDelay.
type Bar struct {
	w     io.Writer
	what  string // what is counted, e.g. "writing pages"
	tty   bool
	start time.Time
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
}

// New returns a bar that counts what it says, e.g. "reading
// articles".
func New(w io.Writer, what string) *Bar {
	f, ok := w.(*os.File)
	return &Bar{w: w, what: what, tty: ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

// Set reports done of total; it is called from several goroutines.
func (p *Bar) Set(done, total int) {
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
func (p *Bar) Lines() io.Writer { return progressLines{p} }

type progressLines struct{ p *Bar }

func (l progressLines) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.bar != nil {
		l.p.bar.Clear()
	}
	return l.p.w.Write(b)
}

// Close removes the bar, if one was shown.
func (p *Bar) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
