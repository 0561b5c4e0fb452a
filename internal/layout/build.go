package layout

import (
	"strconv"
	"strings"
)

// NameList returns the names of the layouts as a message offers them,
// the default first: "pages" or "chunks".
func NameList() string {
	ls := Layouts()
	var b strings.Builder
	for i, l := range ls {
		switch {
		case i == 0:
		case i == len(ls)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(l.Name))
	}
	return b.String()
}
