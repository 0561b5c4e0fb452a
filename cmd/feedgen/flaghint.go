package main

import (
	"fmt"
	"slices"

	"github.com/feedgen/feedgen/internal/habit"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagHint returns err, a flag error of c's command line args, with what
// was likely meant: the habit of another tool (habit.Flags) that c has
// an equivalent of, else a flag of c's whose name is close to the one
// given. Other errors come back as they are.
func flagHint(c *cobra.Command, err error, args []string) error {
	typed, in, ok := habit.UnknownFlag(err.Error())
	if !ok {
		return err
	}
	has := func(name string) bool { return c.Flags().Lookup(name) != nil }
	if h := habit.FlagHint(c.Name(), typed, in, args, has); h != "" {
		return fmt.Errorf("%w: %s takes %s", err, c.CommandPath(), h)
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	if name := habit.CloseFlag(typed, names); name != "" {
		return fmt.Errorf("%w: did you mean --%s?", err, name)
	}
	return err
}
