package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
)

// Verify opens and verifies the bundle name, as feedgen verify and serve
// --bundle do. On problems it prints them to w, one line each as "FILE:
// entry: what is wrong", and returns a *VerifyError that says how many.
// Every page verified is handed to keep, when not nil (see KeepFunc). A
// folder given as a bundle is refused with what to run on it instead.
func Verify(ctx context.Context, name string, w io.Writer, keep KeepFunc) (*Bundle, error) {
	if err := notBundle(name); err != nil {
		return nil, err
	}
	b, err := OpenWith(ctx, name, keep)
	var ps *Problems
	if errors.As(err, &ps) {
		var lines []string
		for _, p := range ps.Report() {
			fmt.Fprintf(w, "%s: %s\n", name, p)
			lines = append(lines, p.String())
		}
		if len(ps.Damage) > 0 {
			return nil, &VerifyError{fmt.Errorf("%s: damaged: restore it from a copy, or write it again from its build with feedgen bundle", name), lines}
		}
		return nil, &VerifyError{fmt.Errorf("%s: %s: the bundle is damaged or not a feedgen bundle", name, human.Plural(len(ps.Other), "problem")), lines}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// VerifyError is the error of a bundle that does not verify, with the
// lines Verify printed for it (verify --json gives them).
type VerifyError struct {
	error
	Lines []string
}

// ProblemLines are the lines printed for err when it is a *VerifyError,
// else none.
func ProblemLines(err error) []string {
	var ve *VerifyError
	if !errors.As(err, &ve) {
		return nil
	}
	return ve.Lines
}

// notBundle refuses name, given as a bundle, when it is a folder: a
// build's, which feedgen serve --dir serves and feedgen bundle archives,
// or a site's, whose build is in its output_dir.
func notBundle(name string) error {
	info, err := os.Stat(name)
	if err != nil || !info.IsDir() {
		return nil // opening it says what is wrong
	}
	const what = "a bundle is the .zip that feedgen bundle writes"
	if out, ok := outdir.SiteOutput(name); ok {
		first := ""
		if _, err := os.Stat(filepath.Join(out, manifest.Name)); err != nil {
			first = fmt.Sprintf(" (there is none yet: run feedgen build in %s first)", name)
		}
		return fmt.Errorf("%s is a site's folder, not a bundle (%s): its build is in %s%s: feedgen serve --dir %s serves it, feedgen bundle --dir %s -o FILE.zip archives it", name, what, out, first, out, out)
	}
	if _, err := os.Stat(filepath.Join(name, manifest.Name)); err == nil {
		return fmt.Errorf("%s is the folder of a build, not a bundle (%s): feedgen serve --dir %s serves it, feedgen bundle --dir %s -o FILE.zip archives it", name, what, name, name)
	}
	return fmt.Errorf("%s is a folder, not a bundle (%s)", name, what)
}
