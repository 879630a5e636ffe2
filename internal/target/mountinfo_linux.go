package target

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mount is a line of /proc/self/mountinfo: which directory of which file
// system (root, on dev) is seen at point.
type mount struct {
	dev, root, point string
}

// mounts reads this process's mounts, in the order mounted (a later one
// over the same point hides the earlier); nil when they cannot be read.
func mounts() []mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		ms = append(ms, mount{dev: fields[2], root: unescape(fields[3]), point: unescape(fields[4])})
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

// under is the rest of path below dir, and whether path is dir or in it.
func under(path, dir string) (string, bool) {
	if dir == "/" {
		return strings.TrimPrefix(path, "/"), true
	}
	if path == dir {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, dir+"/")
	return rest, ok
}

// origin is where realPath is seen in a mount of its file system's root,
// when it is seen through a bind mount of a directory below that root: the
// log directory of a partition directory bind-mounted elsewhere is the one
// it is in, whose lock and configuration are the partition's. It is realPath
// itself otherwise, or when no such mount shows the same directory.
func origin(ms []mount, realPath string) string {
	in := -1
	var rest string
	for i, m := range ms {
		if r, ok := under(realPath, m.point); ok && (in < 0 || len(m.point) >= len(ms[in].point)) {
			in, rest = i, r
		}
	}
	if in < 0 || ms[in].root == "/" {
		return realPath
	}
	inFS := filepath.Join(ms[in].root, rest)
	id, ok := idOf(realPath)
	if !ok {
		return realPath
	}
	// The view of the widest directory of the file system: its root's
	// where it is mounted.
	best, bestRoot := realPath, ms[in].root
	for _, m := range ms {
		if m.dev != ms[in].dev || len(m.root) >= len(bestRoot) {
			continue
		}
		r, ok := under(inFS, m.root)
		if !ok {
			continue
		}
		at := filepath.Join(m.point, r)
		if other, ok := idOf(at); ok && other == id {
			if real, err := filepath.EvalSymlinks(at); err == nil && real == at {
				best, bestRoot = at, m.root
			}
		}
	}
	return best
}
