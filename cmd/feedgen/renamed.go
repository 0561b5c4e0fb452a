package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renamedFrom is the annotation of a hidden flag that is the old name of
// another: its value is the new name.
const renamedFrom = "feedgen-renamed-to"

// renamed makes old a hidden alias of the flag now of cmd: the name it
// had before one concept got one name across commands (--dir, --addr,
// --out). Given, it sets the same value, counts as now given, and
// noteRenamed says the new name.
func renamed(cmd *cobra.Command, old, now string) {
	f := cmd.Flags().Lookup(now)
	cmd.Flags().AddFlag(&pflag.Flag{
		Name: old, Usage: "now --" + now, Value: f.Value, DefValue: f.DefValue, Hidden: true,
		Annotations: map[string][]string{renamedFrom: {now}},
	})
}

// noteRenamed says, once on stderr for each, the new names of the old
// flags given to cmd, and marks the new ones given.
func noteRenamed(cmd *cobra.Command, stderr io.Writer) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if now, ok := f.Annotations[renamedFrom]; ok {
			fmt.Fprintf(stderr, "feedgen: --%s is now --%s\n", f.Name, now[0])
			cmd.Flags().Lookup(now[0]).Changed = true
		}
	})
}
