package dump

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestShallowRangesSameOutput: a shallow dump read in ranges on several
// goroutines (logfmt.HeaderReader, cut at the .index's positions) prints
// what one goroutine prints, in text and JSON, with and without the summary
// (text lines without it are rendered on the range goroutines), on v2
// batches and compressed legacy wrappers, clean and damaged.
func TestShallowRangesSameOutput(t *testing.T) {
	for _, f := range []struct {
		magic   int8
		c       codec.Type
		records int
	}{{2, codec.None, 12000}, {1, codec.Snappy, 19000}} {
		o := gen.Options{Topics: []string{"r"}, Records: f.records, Keys: 500, ValueBytes: 500, BatchRecords: 4,
			Magic: f.magic, Compression: f.c, SegmentBytes: 6 << 20, Seed: 5}
		if f.magic == 2 {
			o.TransactionalRatio, o.AbortRatio = 0.2, 0.3
		}
		dir := generated(t, o)
		log := filepath.Join(dir, "r-0", layout.SegmentName(0, layout.LogExt))
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 4<<20 {
			t.Fatalf("the segment is %d bytes: too short for ranges", len(data))
		}
		damages := map[string]func([]byte) []byte{
			"clean":   func(b []byte) []byte { return b },
			"flipped": func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b },
			"length": func(b []byte) []byte {
				// The size field of the batch at the third cut, so that the
				// range before it overruns it.
				p := indexPosition(t, dir, 2<<20+100)
				binary.BigEndian.PutUint32(b[p+8:], binary.BigEndian.Uint32(b[p+8:])+3)
				return b
			},
			"torn": func(b []byte) []byte { return b[:len(b)*2/3+7] },
		}
		for name, damage := range damages {
			t.Run(fmt.Sprintf("magic%d-%s/%s", f.magic, f.c, name), func(t *testing.T) {
				if err := os.WriteFile(log, damage(bytes.Clone(data)), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, json := range []bool{false, true} {
					for _, summary := range []bool{false, true} {
						run := func(workers int) string {
							o := DefaultOptions()
							o.JSON, o.Summary, o.Workers = json, summary, workers
							return output(t, o, log)
						}
						if one, three := run(1), run(3); one != three {
							t.Fatalf("json %v, summary %v: 3 workers print\n%s\none prints\n%s", json, summary, firstLines(three, one), firstLines(one, three))
						}
					}
				}
			})
		}
	}
}

// indexPosition is the position of the first .index entry at or past pos.
func indexPosition(t *testing.T, dir string, pos int64) int64 {
	t.Helper()
	idx, err := os.ReadFile(filepath.Join(dir, "r-0", layout.SegmentName(0, layout.IndexExt)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+8 <= len(idx); i += 8 {
		if p := int64(binary.BigEndian.Uint32(idx[i+4:])); p >= pos {
			return p
		}
	}
	t.Fatal("no entry")
	return 0
}

// firstLines is a's lines from the first that differs from b, a few.
func firstLines(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := bytes.LastIndexByte([]byte(a[:i]), '\n') + 1
	return a[start:min(len(a), start+600)]
}
