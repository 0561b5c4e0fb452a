package manifest

import (
	"slices"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/syndication"
)

// FeedFormats returns the formats of the reader feeds the build of m has
// (config feeds:), in the order of syndication.Formats: those of which it
// lists a file. A format the build has not is no path of its server: its
// feed's path answers as any other path does.
func (m *Manifest) FeedFormats() []syndication.Format {
	has := map[string]bool{}
	for _, f := range m.Files {
		if format, ok := layout.FeedFormat(f.Path); ok {
			has[format.Name] = true
		}
	}
	return slices.DeleteFunc(syndication.Formats(), func(f syndication.Format) bool { return !has[f.Name] })
}
