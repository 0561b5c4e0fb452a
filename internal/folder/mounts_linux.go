package folder

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A mount is a line of /proc/self/mountinfo: the folder root of the file
// system dev shown at point.
type mount struct {
	dev, root, point string
}

// mountTable reads the mounts of this process; none when it cannot.
func mountTable() []mount {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var ms []mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		ms = append(ms, mount{dev: f[2], root: unescape(f[3]), point: unescape(f[4])})
	}
	return ms
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// otherName returns another path of the folder dir when dir is where a
// folder below the top of its file system is mounted a second time
// (mount --bind): its path through a mount of a folder above it, whose
// parents are its parents on the file system; "" when there is none.
func otherName(ms []mount, dir string) string {
	var m *mount
	for i := range ms {
		if ms[i].point == dir {
			m = &ms[i] // the last one mounted there is the one seen
		}
	}
	if m == nil || m.root == "/" {
		return ""
	}
	for _, n := range ms {
		if n.dev != m.dev || n.root == m.root {
			continue
		}
		rel, err := filepath.Rel(n.root, m.root)
		if err == nil && rel != "." && filepath.IsLocal(rel) {
			return filepath.Join(n.point, rel)
		}
	}
	return ""
}
