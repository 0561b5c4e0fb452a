package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// readmeDocs are the documents whose shell examples must run as written:
// each ```sh block in them is run by a test script, or says why not.
var readmeDocs = []string{"README.md", "docs/deploying.md", "docs/publishing.md"}

// The comment lines that must stand just before a ```sh block (blank lines
// may come between): the script that runs the block's commands, in order,
// or why the block is not run.
var (
	runByRE  = regexp.MustCompile(`^<!-- run by (cmd/feedgen/testdata/script/[a-z0-9_]+\.txtar) -->$`)
	notRunRE = regexp.MustCompile(`^<!-- not run: .+ -->$`)
)

// backgroundRE is the end of a script line that runs it in the
// background: & or &NAME&.
var backgroundRE = regexp.MustCompile(`\s&(\w+&)?$`)

// scriptValues are the values a script uses where a document shows a fixed
// one: a script cannot listen on port 8080, which a reader's own server may
// hold, so it listens on $PORT, a free port. A feedgen serve the document
// starts on its default address, the script starts with scriptAddr added.
var scriptValues = strings.NewReplacer("$PORT", "8080")

const scriptAddr = " --addr 127.0.0.1:$PORT"

// TestDocsExamplesRun holds the documents' examples to the scripts that
// run them: every command of a block marked "run by" is a command of that
// script, in the same order (the script checks what each one does between
// them), so an example cannot change, or stop working, without a test
// failing. A script runs a document's command with exec when it is not
// feedgen, and with a trailing & or &NAME& when it runs in the background (as the
// document may); commands joined by && are commands of their own.
func TestDocsExamplesRun(t *testing.T) {
	for _, doc := range readmeDocs {
		t.Run(doc, func(t *testing.T) {
			blocks, err := docBlocks(filepath.Join("..", "..", doc))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range blocks {
				switch {
				case b.script == "" && !b.notRun:
					t.Errorf("%s:%d: a ```sh block with no <!-- run by cmd/feedgen/testdata/script/NAME.txtar --> or <!-- not run: WHY --> before it", doc, b.line)
				case b.script != "":
					if err := quotes(filepath.Join("..", "..", b.script), b.commands); err != nil {
						t.Errorf("%s:%d: %v", doc, b.line, err)
					}
				}
			}
		})
	}
}

// docBlock is one ```sh block of a document.
type docBlock struct {
	line     int    // the line of its opening fence
	script   string // the script that runs it, from the repository's root
	notRun   bool
	commands []string
}

// docBlocks reads the ```sh blocks of a markdown file.
func docBlocks(name string) ([]docBlock, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []docBlock
		marker string // the last comment line before a block
		in     *docBlock
		cont   string // a command continued with \
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if in != nil {
			if strings.HasPrefix(line, "```") {
				blocks = append(blocks, *in)
				in = nil
				continue
			}
			line = strings.TrimSpace(line)
			if c, ok := strings.CutSuffix(line, `\`); ok {
				cont += strings.TrimSpace(c) + " "
				continue
			}
			line, cont = cont+stripComment(line), ""
			for c := range strings.SplitSeq(line, " && ") {
				// A server the document starts in the background, as
				// the script does.
				if c = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c), "&")); c != "" {
					in.commands = append(in.commands, c)
				}
			}
			continue
		}
		switch {
		case line == "```sh":
			in = &docBlock{line: n}
			if m := runByRE.FindStringSubmatch(marker); m != nil {
				in.script = m[1]
			}
			in.notRun = notRunRE.MatchString(marker)
			marker = ""
		case strings.HasPrefix(line, "<!--"):
			marker = line
		case strings.TrimSpace(line) != "":
			marker = ""
		}
	}
	if in != nil {
		return nil, fmt.Errorf("%s:%d: a ```sh block with no end", name, in.line)
	}
	return blocks, sc.Err()
}

// stripComment drops a shell comment: a line's from its first # after a
// space, or the whole line when it starts with #.
func stripComment(line string) string {
	if strings.HasPrefix(line, "#") {
		return ""
	}
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// quotes reports whether the script runs the commands in order.
func quotes(script string, commands []string) error {
	a, err := txtar.ParseFile(script)
	if err != nil {
		return err
	}
	var lines []string
	for l := range strings.SplitSeq(string(a.Comment), "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "exec ")
		l = strings.TrimSpace(backgroundRE.ReplaceAllString(l, ""))
		if strings.HasPrefix(l, "feedgen serve") {
			l = strings.TrimSuffix(l, scriptAddr)
		}
		lines = append(lines, scriptValues.Replace(l))
	}
	rest := lines
	for _, c := range commands {
		i := slices.Index(rest, c)
		if i < 0 {
			if slices.Contains(lines, c) {
				return fmt.Errorf("%s runs %q, but not in the order the example shows it", script, c)
			}
			return fmt.Errorf("%s does not run %q: the example is not tested as written", script, c)
		}
		rest = rest[i+1:]
	}
	return nil
}
