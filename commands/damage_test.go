package commands

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// damageBatch is a data batch of the fixture: where it is and what it holds.
type damageBatch struct {
	log          string
	pos, size    int64
	base, last   int64
	maxTimestamp int64
}

// damageFixture is a partition of several segments with transactions,
// generated once and copied for each case.
type damageFixture struct {
	src      string
	segments []layout.Segment // as in src
	batches  [][]damageBatch  // data batches of each segment
}

func newDamageFixture(t *testing.T) *damageFixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	parts, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"orders"}, Magic: 2, Records: 1500, Keys: 100,
		SegmentBytes: 32 << 10, TransactionalRatio: 0.5, AbortRatio: 0.5, Seed: 36})
	if err != nil {
		t.Fatal(err)
	}
	fx := &damageFixture{src: parts[0].Dir}
	p, err := layout.ReadPartition(fx.src)
	if err != nil {
		t.Fatal(err)
	}
	fx.segments = p.Segments
	for _, s := range p.Segments {
		seg, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		var bs []damageBatch
		for seg.Next() {
			b := seg.Batch()
			if b.Header().IsControl() {
				continue
			}
			bs = append(bs, damageBatch{s.Log, b.Pos, int64(b.Size()), b.Header().BaseOffset(), b.LastOffset(), b.MaxTimestamp()})
		}
		seg.Close()
		fx.batches = append(fx.batches, bs)
	}
	if len(p.Segments) < 3 {
		t.Fatalf("the fixture has %d segments, want 3 or more", len(p.Segments))
	}
	return fx
}

// pick is the first batch of the first segment, one in the middle of the
// middle segment, or the last of the last.
func (fx *damageFixture) pick(at string) damageBatch {
	switch at {
	case "first":
		return fx.batches[0][0]
	case "middle":
		bs := fx.batches[len(fx.batches)/2]
		return bs[len(bs)/2]
	}
	bs := fx.batches[len(fx.batches)-1]
	return bs[len(bs)-1]
}

// withFile is the segment of the first, middle or last segment that has a
// non-empty file of the extension.
func (fx *damageFixture) withFile(t *testing.T, ext, at string) string {
	t.Helper()
	var files []string
	for _, s := range fx.segments {
		f := filepath.Join(fx.src, layout.SegmentName(s.Base, ext))
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			files = append(files, f)
		}
	}
	if len(files) < 3 {
		t.Fatalf("%d segments with a %s, want 3 or more", len(files), ext)
	}
	switch at {
	case "first":
		return files[0]
	case "middle":
		return files[len(files)/2]
	}
	return files[len(files)-1]
}

// entryAt is the byte position of the first, middle or last entry of
// size bytes in n bytes of them.
func entryAt(n int, size int, at string) int64 {
	switch at {
	case "first":
		return 0
	case "middle":
		return int64(n/size/2) * int64(size)
	}
	return int64(n - size)
}

// patch replaces the bytes of the file at path with what change makes of
// them.
func patch(t *testing.T, path string, change func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, change(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// damage is one kind of damage at one place: it changes the copy of the
// fixture at dir and returns the file damaged and, for a .log, the byte
// position of the damaged batch, and the offset and timestamp a lookup of
// that batch uses.
type damage struct {
	kind, at string
	apply    func(t *testing.T, fx *damageFixture, dir string) (file string, pos, offset, timestamp int64)
}

// inCopy is path's name in the copy dir.
func inCopy(dir, path string) string { return filepath.Join(dir, filepath.Base(path)) }

func logDamage(what string, change func(b []byte, batch damageBatch)) func(string) damage {
	return func(at string) damage {
		return damage{".log " + what, at, func(t *testing.T, fx *damageFixture, dir string) (string, int64, int64, int64) {
			b := fx.pick(at)
			file := inCopy(dir, b.log)
			patch(t, file, func(data []byte) []byte { change(data, b); return data })
			return file, b.pos, b.base, b.maxTimestamp
		}}
	}
}

// indexDamage damages the first, middle or last entry of an index file
// of size bytes per entry with change, which returns the offset and
// timestamp a lookup through that entry uses (-1: none).
func indexDamage(ext string, size int, change func(entry []byte, base int64) (offset, timestamp int64)) func(string) damage {
	return func(at string) damage {
		return damage{ext, at, func(t *testing.T, fx *damageFixture, dir string) (string, int64, int64, int64) {
			file := inCopy(dir, fx.withFile(t, ext, at))
			base := layout.ParseFileName(filepath.Base(file)).Base
			var offset, ts int64
			patch(t, file, func(d []byte) []byte {
				offset, ts = change(d[entryAt(len(d), size, at):], base)
				return d
			})
			return file, -1, offset, ts
		}}
	}
}

func damages() []damage {
	var ds []damage
	kinds := []func(string) damage{
		// A byte of the header the checksum covers: the attributes.
		logDamage("header byte", func(d []byte, b damageBatch) { d[b.pos+22] ^= 0x08 }),
		logDamage("CRC", func(d []byte, b damageBatch) { d[b.pos+17] ^= 0xff }),
		logDamage("length field", func(d []byte, b damageBatch) {
			binary.BigEndian.PutUint32(d[b.pos+8:], uint32(b.size-12-3))
		}),
		logDamage("records area", func(d []byte, b damageBatch) { d[b.pos+b.size-2] ^= 0xff }),
		// A record's length, with the checksum made to match: only a
		// reader of the records sees it.
		logDamage("record, checksum recomputed", func(d []byte, b damageBatch) {
			d[b.pos+61] = 0x7f
			h := logfmt.BatchHeader(d[b.pos:])
			binary.BigEndian.PutUint32(d[b.pos+17:], h.ComputeCRC(d[b.pos:b.pos+b.size]))
		}),
		indexDamage(layout.IndexExt, index.OffsetEntrySize, func(d []byte, base int64) (int64, int64) {
			// The position, one byte into the batch.
			binary.BigEndian.PutUint32(d[4:], binary.BigEndian.Uint32(d[4:])+1)
			return base + int64(binary.BigEndian.Uint32(d)), -1
		}),
		indexDamage(layout.TimeIndexExt, index.TimeEntrySize, func(d []byte, base int64) (int64, int64) {
			// The offset, below the segment's base.
			ts := int64(binary.BigEndian.Uint64(d))
			binary.BigEndian.PutUint32(d[8:], 0xffffffff)
			return -1, ts
		}),
		indexDamage(layout.TxnIndexExt, index.TxnEntrySize, func(d []byte, base int64) (int64, int64) {
			// The last offset, before the first.
			binary.BigEndian.PutUint64(d[18:], binary.BigEndian.Uint64(d[10:])-1)
			return -1, -1
		}),
		func(at string) damage {
			return damage{".snapshot", at, func(t *testing.T, fx *damageFixture, dir string) (string, int64, int64, int64) {
				snaps, err := filepath.Glob(filepath.Join(dir, "*"+layout.SnapshotExt))
				if err != nil || len(snaps) == 0 {
					t.Fatalf("no snapshot: %v", err)
				}
				// The latest, which a broker loads.
				file := snaps[len(snaps)-1]
				patch(t, file, func(d []byte) []byte {
					d[entryAt(len(d), 1, at)] ^= 0x40
					return d
				})
				return file, -1, -1, -1
			}}
		},
		func(at string) damage {
			return damage{"leader-epoch-checkpoint", at, func(t *testing.T, fx *damageFixture, dir string) (string, int64, int64, int64) {
				file := filepath.Join(dir, layout.LeaderEpochCheckpointFile)
				// Its lines: the version, the count, the entries.
				line := map[string]int{"first": 0, "middle": 1, "last": 2}[at]
				patch(t, file, func(d []byte) []byte {
					lines := strings.Split(string(d), "\n")
					lines[line] = "x" + lines[line]
					return []byte(strings.Join(lines, "\n"))
				})
				return file, -1, -1, -1
			}}
		},
		func(at string) damage {
			return damage{"partition.metadata", at, func(t *testing.T, fx *damageFixture, dir string) (string, int64, int64, int64) {
				file := filepath.Join(dir, layout.PartitionMetadataFile)
				patch(t, file, func(d []byte) []byte {
					switch at {
					case "first":
						d[0] = 'V' // "version:"
					case "middle":
						d[bytes.IndexByte(d, '\n')] = ' ' // the line break
					default:
						d[len(d)-1] = '!' // the topic id
					}
					return d
				})
				return file, -1, -1, -1
			}}
		},
	}
	for _, k := range kinds {
		for _, at := range []string{"first", "middle", "last"} {
			ds = append(ds, k(at))
		}
	}
	return ds
}

// damageCommands are the read-only commands run on each damage; args gets
// the partition directory and the offset and timestamp a lookup of the
// damaged place uses.
var damageCommands = []struct {
	name string
	args func(dir string, offset, ts int64) []string
}{
	{"verify", func(dir string, _, _ int64) []string { return []string{"verify", dir} }},
	{"verify --deep", func(dir string, _, _ int64) []string { return []string{"verify", "--deep", dir} }},
	{"dump", func(dir string, _, _ int64) []string { return []string{"dump", dir} }},
	{"dump --deep-iteration", func(dir string, _, _ int64) []string { return []string{"dump", "--deep-iteration", dir} }},
	{"find --offset", func(dir string, offset, _ int64) []string {
		if offset < 0 {
			return nil
		}
		return []string{"find", "--offset", fmt.Sprint(offset), dir}
	}},
	{"find --timestamp", func(dir string, _, ts int64) []string {
		if ts < 0 {
			return nil
		}
		return []string{"find", "--timestamp", fmt.Sprint(ts), dir}
	}},
	{"reindex --check", func(dir string, _, _ int64) []string { return []string{"reindex", "--check", dir} }},
	{"export", func(dir string, _, _ int64) []string { return []string{"export", dir} }},
	{"grep", func(dir string, _, _ int64) []string { return []string{"grep", "--key-regex", ".", "--count", dir} }},
}

// notRead says, for a damage and a command, why the command legitimately
// does not see it: it does not read that file, or not that part of it.
// Every other command must exit non-zero and name the file.
var notRead = map[string]map[string]string{
	".log record, checksum recomputed": {
		"verify":          "without --deep, batches are checked by frame and checksum, not record by record",
		"dump":            "without --deep-iteration, batch headers only",
		"reindex --check": "reads batch headers and checksums, as LogSegment.recover does, not records",
	},
	".index": {
		"find --timestamp": "the damage is looked up by offset",
		"export":           "reads the log from its first byte; an index only serves range flags",
		"grep":             "reads the log from its first byte; an index only serves range flags",
	},
	".timeindex": {
		"find --offset": "an offset lookup uses the .index",
		"export":        "reads the log from its first byte; an index only serves range flags",
		"grep":          "reads the log from its first byte; an index only serves range flags",
	},
	".txnindex": {
		"find --offset":    "reads no .txnindex",
		"find --timestamp": "reads no .txnindex",
		"export":           "aborted transactions come from the markers in the log (fetch); a .txnindex changes nothing",
		"grep":             "aborted transactions come from the markers in the log (fetch); a .txnindex changes nothing",
	},
}

// notReadPartitionFile: the producer snapshot and the partition's
// checkpoint files are read by verify and dump only.
var notReadPartitionFile = map[string]string{
	"find --offset":    "reads segments and indexes only",
	"find --timestamp": "reads segments and indexes only",
	"reindex --check":  "rebuilds and checks the indexes of segments only",
	"export":           "reads the records of the log only",
	"grep":             "reads the records of the log only",
}

// positions are the byte positions an output gives: "at byte N" in text,
// "byte N" in lines such as find's.
var positions = regexp.MustCompile(`byte (\d+)`)

// TestDamageNamed (issue 36): each kind of file of a partition of several
// segments with transactions, damaged in its first, middle or last batch or
// entry, makes every read-only command that reads it exit non-zero and name
// the file, and a .log's damaged batch with a byte position inside it.
func TestDamageNamed(t *testing.T) {
	fx := newDamageFixture(t)
	for _, d := range damages() {
		t.Run(strings.ReplaceAll(d.kind, " ", "-")+"/"+d.at, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs", "orders-0")
			testutil.CopyTree(t, fx.src, dir)
			file, pos, offset, ts := d.apply(t, fx, dir)
			var batchSize int64
			if pos >= 0 {
				batchSize = fx.pick(d.at).size
			}
			for _, c := range damageCommands {
				why := notRead[d.kind][c.name]
				if d.kind == ".snapshot" || !strings.HasPrefix(d.kind, ".") {
					why = notReadPartitionFile[c.name]
				}
				if why != "" {
					continue
				}
				args := c.args(dir, offset, ts)
				if args == nil {
					t.Errorf("%s: no lookup target and no reason in the table", c.name)
					continue
				}
				code, out, errOut := runArgs(args...)
				if code == ExitOK || code == ExitUsage {
					t.Errorf("%s: exit %d on damage it reads; stdout %q, stderr %q", c.name, code, clip(out), clip(errOut))
					continue
				}
				if !strings.Contains(out+errOut, filepath.Base(file)) {
					t.Errorf("%s: exit %d, %s not named; stdout %q, stderr %q", c.name, code, filepath.Base(file), clip(out), clip(errOut))
				}
				if pos < 0 {
					continue
				}
				inBatch := false
				for _, m := range positions.FindAllStringSubmatch(out+errOut, -1) {
					n, _ := strconv.ParseInt(m[1], 10, 64)
					inBatch = inBatch || n >= pos && n < pos+batchSize
				}
				if !inBatch {
					t.Errorf("%s: exit %d, no position in the batch at bytes %d to %d; stdout %q, stderr %q", c.name, code, pos, pos+batchSize, clip(out), clip(errOut))
				}
			}
		})
	}
}

// clip keeps the start of a long output for a message.
func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
