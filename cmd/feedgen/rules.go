package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/rules"
	"github.com/spf13/cobra"
)

// rulesOptions are the options of feedgen rules.
type rulesOptions struct {
	*globalOptions
	req    rules.Request
	config string
	json   bool // --check's answer as JSON
}

// check refuses --json without --check; rules.Generate checks the rest.
func (o *rulesOptions) check() error {
	if o.json && !o.req.Check {
		return usageError{errors.New("--json is for --check: rules prints the paths of the files it writes, one a line")}
	}
	return nil
}

// checkFailed is an error of rules --check that is not stale files: the
// check could not be made. It exits 2, as diff and cmp do, so that exit 1
// says stale and nothing else.
type checkFailed struct{ err error }

func (e checkFailed) Error() string { return e.err.Error() }
func (e checkFailed) Unwrap() error { return e.err }

// runRules writes the target's files for the build of the config, or
// with --check compares them with what it would write, and prints what
// it did.
func runRules(ctx context.Context, o *rulesOptions) error {
	rep, err := o.generate(ctx)
	for _, p := range rep.Written {
		fmt.Fprintln(o.stdout, p)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(o.stderr, n)
	}
	var fe rules.FlagError
	var stale *rules.StaleError
	var ue usageError
	switch {
	case errors.As(err, &fe):
		return usageError{fe}
	case o.req.Check && err != nil && !errors.As(err, &stale) && !errors.As(err, &ue):
		return checkFailed{err}
	}
	if c := rep.Check; c != nil {
		switch {
		case o.json:
			if jerr := writeJSON(o.stdout, c); jerr != nil {
				return jerr
			}
		case c.UpToDate:
			fmt.Fprintf(o.stdout, "the %s rules in %s are up to date\n", c.Target, c.Output)
		default:
			for _, f := range c.Stale {
				fmt.Fprintf(o.stdout, "%s: stale: %s\n", f.File, f.Why)
			}
		}
	}
	return err
}

// generate calls rules.Generate, which reads the site's config once the
// flags are checked. A site's folder given as --dir says where its build
// is before the config is looked for: run outside a site, there is none
// here.
func (o *rulesOptions) generate(ctx context.Context) (rules.Report, error) {
	o.req.ConfigFlag = o.config
	o.req.LoadConfig = func(dir string) (*config.Config, error) {
		if dir != "" {
			if err := outdir.NotSite(dir, "--dir"); err != nil {
				return nil, err
			}
		}
		return loadSite(o.config, o.config != "")
	}
	var err error
	if o.req.WorkDir, err = os.Getwd(); err != nil {
		return rules.Report{}, err
	}
	return rules.Generate(ctx, o.req)
}

func newRulesCmd(g *globalOptions) *cobra.Command {
	o := &rulesOptions{globalOptions: g}
	var about strings.Builder
	for _, t := range rules.Targets() {
		fmt.Fprintf(&about, "\n  %-11s %s\n  %-11s %s\n", t.Name, strings.Join(t.Files, ", "), "", t.Run)
	}
	cmd := &cobra.Command{
		Use:   "rules TARGET -o OUTDIR",
		Short: "Write the configuration that makes a server or CDN answer like feedgen serve",
		Long: `Rules writes the configuration a platform needs to serve the build as feedgen
serve does: the mapping of /articles/?limit=&offset= (and the filters) onto the
page files, the JSON 404, 405 and OPTIONS answers, the 301 for /articles and
the headers. It reads the pagination and filters of the build in --dir (by
default the config's output_dir), which must be a build of --config.

A build of pagination.layout: chunks has no page files: its pages are put
together per request, by nginx-njs, cloudflare and netlify (and feedgen
serve), whose files then hold no counts: a build does not make them stale.
nginx, caddy, apache and cloudfront only map a request onto a file, and
refuse it. With --cache DIR, nginx-njs keeps each page it puts together for
a second in DIR (which nginx must be able to write): hot pages are then
served as files are, and a new build within a second or so.

The files of a pages build hold its counts and filter values: a build
that changes them makes them stale. rules records each folder it writes
(in .feedgen-rules.json beside the config), and feedgen build warns of the
folders written for its output that it made stale, with the command that
writes them again. --check writes nothing, and exits 1 naming each stale
file of OUTDIR and what differs, 2 when it cannot check.

With --standalone, nginx, nginx-njs and apache write a complete config of
their server instead of one to include: it needs no system config, keeps
the server's pid, logs and temporary files in OUTDIR, and runs as any user
on a port above 1024 (nginx -p OUTDIR -c nginx.conf; apache2 -d OUTDIR -f
apache.conf -k start).

Targets, the files each writes and how they run:
` + about.String(),
		Example: `  feedgen rules nginx-njs -o deploy/                  # then: include /path/to/deploy/nginx.conf; in http {}
  feedgen rules nginx-njs --standalone --addr 8080 -o nginx-njs   # then: nginx -p nginx-njs -c nginx.conf
  feedgen rules nginx-njs --check -o nginx-njs          # exit 1 when a build made them stale
  feedgen rules netlify -o site/
  feedgen rules cloudflare --dir /srv/feed/public -o worker/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one target, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		ValidArgsFunction: completeTarget,
		RunE: func(cmd *cobra.Command, args []string) error {
			set := cmd.Flags().Changed
			o.req.Target = args[0]
			o.req.Given = rules.Given{Dir: set("dir"), Addr: set("addr"), Standalone: set("standalone"), Cache: set("cache"), Modules: set("modules")}
			return checkRun(cmd.Context(), o, runRules)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	f.StringVarP(&o.req.Dir, "dir", "d", "", "the build's folder, as the platform sees it (default: output_dir of the config)")
	f.StringVarP(&o.req.Addr, "addr", "a", "80", "where a server target listens: PORT or HOST:PORT")
	f.StringVarP(&o.req.Out, "out", "o", "", "the folder to write the files to (required)")
	renamed(cmd, "root", "dir")
	renamed(cmd, "listen", "addr")
	renamed(cmd, "output", "out")
	cmd.Flags().StringVar(&o.req.Cache, "cache", "", "nginx-njs with a chunks build: a `folder` where nginx keeps each page njs puts together for a second")
	cmd.Flags().BoolVar(&o.req.Standalone, "standalone", false, "nginx, nginx-njs, apache: write a complete config of the server, which keeps its pid, logs and temporary files in OUTDIR (no system config needed)")
	cmd.Flags().StringVar(&o.req.Modules, "modules", "", "with --standalone, nginx-njs or apache: the `folder` of the server's modules (default: Debian's)")
	cmd.Flags().BoolVar(&o.req.Check, "check", false, "write nothing: compare the files in OUTDIR with those the build needs now (exit 1 when stale, 2 when it cannot check), with the flags they were written with")
	cmd.Flags().BoolVar(&o.json, "json", false, "with --check: print the answer as one JSON object (target, output, up_to_date, recorded, stale files and why, command)")
	cmd.Flags().BoolVar(&o.req.Strict, "strict", false, "fail, writing nothing, when the files cannot answer all the build has (cloudfront: filters that do not fit)")
	return cmd
}
