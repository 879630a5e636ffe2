package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// tiny generates a partition of a few segments of a few batches, with every
// file gen writes for the format.
func tiny(t testing.TB, magic int8, c codec.Type) fixture {
	o := gen.Options{Records: 40, Keys: 8, ValueBytes: 16, BatchRecords: 4, Magic: magic, Compression: c, SegmentBytes: 1024, Seed: 5}
	if magic == 2 {
		o.TransactionalRatio, o.AbortRatio = 0.5, 0.5
	}
	return generate(t, o)
}

// sweepFormats are the formats a sweep covers: all of them, or in -short
// mode one per magic.
func sweepFormats() []string {
	if testing.Short() {
		return []string{"v0-gzip", "v1", "v2-lz4"}
	}
	var out []string
	for _, f := range formats {
		out = append(out, f.name)
	}
	return out
}

func format(name string) (int8, codec.Type) {
	for _, f := range formats {
		if f.name == name {
			return f.magic, f.codec
		}
	}
	panic(name)
}

// TestEveryByteFlip damages the files of a partition and its log directory
// one byte at a time (every byte of batch headers and of the small files,
// every fifth byte of record data) and wants each damage found. Bytes that
// carry no data are left out: comment lines of meta.properties, and the
// empty marker files.
func TestEveryByteFlip(t *testing.T) {
	for _, name := range sweepFormats() {
		t.Run(name, func(t *testing.T) {
			magic, c := format(name)
			fx := tiny(t, magic, c)
			var files []string
			for _, pattern := range []string{filepath.Join(fx.part, "*"), filepath.Join(fx.dir, "*")} {
				m, _ := filepath.Glob(pattern)
				files = append(files, m...)
			}
			flips := 0
			for _, path := range files {
				if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Size() == 0 {
					continue
				}
				orig := mustRead(t, path)
				for _, i := range flipPositions(t, path, orig) {
					b := append([]byte(nil), orig...)
					b[i] ^= 0xff
					mustWrite(t, path, b)
					if r := run(t, Options{StrictIndexes: true}, fx.dir); r.problems == 0 {
						t.Errorf("%s: byte %d flipped, no problem found", path, i)
					}
					flips++
				}
				mustWrite(t, path, orig)
			}
			t.Logf("%d flips", flips)
		})
	}
}

// flipPositions chooses the bytes of a file to damage.
func flipPositions(t testing.TB, path string, b []byte) []int {
	var out []int
	switch filepath.Ext(path) {
	case ".log":
		headers := map[int]bool{}
		for _, x := range testutil.Batches(t, path) {
			for i := 0; i < min(x.Size, 61); i++ {
				headers[int(x.Pos)+i] = true
			}
		}
		for i := range b {
			if headers[i] || i%5 == 0 {
				out = append(out, i)
			}
		}
		return out
	}
	comment := false
	for i, c := range b {
		if filepath.Base(path) == "meta.properties" {
			if i == 0 || b[i-1] == '\n' {
				comment = c == '#'
			}
			if comment {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

// TestEveryTruncation cuts segments short at every third byte, and wants
// each cut found. Cuts exactly between batches are left out for segments
// other than the last: compaction leaves such segments too, and only a
// time index entry past the end can tell, which magic 0 does not have.
func TestEveryTruncation(t *testing.T) {
	for _, name := range sweepFormats() {
		t.Run(name, func(t *testing.T) {
			magic, c := format(name)
			fx := tiny(t, magic, c)
			logs := segmentLogs(t, fx)
			cuts := 0
			for k, path := range []string{logs[0], logs[len(logs)-1]} {
				orig := mustRead(t, path)
				boundary := map[int]bool{}
				for _, x := range testutil.Batches(t, path) {
					boundary[int(x.Pos)] = true
				}
				for i := 0; i < len(orig); i++ {
					if i%3 != 0 && !boundary[i] || k == 0 && boundary[i] && magic == 0 {
						continue
					}
					mustWrite(t, path, orig[:i])
					if r := run(t, Options{StrictIndexes: true}, fx.dir); r.problems == 0 {
						t.Errorf("%s cut at byte %d, no problem found", path, i)
					}
					cuts++
				}
				mustWrite(t, path, orig)
			}
			t.Logf("%d cuts", cuts)
		})
	}
}
