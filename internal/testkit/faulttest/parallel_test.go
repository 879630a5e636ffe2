package faulttest

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// Issue 19: the commands that read partitions deep decode batches on the
// workers that partitions leave over (logfmt.DeepReader). With one
// partition, --workers 1 reads it on one goroutine and --workers 4 on
// four; what the commands print, their exit codes and what they write must
// not differ.

// noDamage is the matrix's partition as generated.
var noDamage = logDamage{"none", false, func(_ testing.TB, g target) []byte { return g.entry }}

// damaged is a copy of the partition gen writes for o, with damage d done
// to an entry in the middle of its first segment; nil when d does not
// apply to the format.
func damaged(t *testing.T, f format, o gen.Options, d logDamage) string {
	dir := fixture(t, o)
	if _, _, e := damageFirst(t, f, onlyPartition(t, dir), d); e == nil {
		return ""
	}
	return dir
}

// damageFirst does damage d to the entry in the middle of the first
// segment of the partition part (damagedEntry), in place. It returns the
// segment, the entry's place and the bytes that replaced it; nil bytes,
// and nothing changed, when d does not apply to the format.
func damageFirst(t testing.TB, f format, part string, d logDamage) (log string, at testutil.BatchAt, e []byte) {
	log = segments(t, part)[0].Log
	at, entry := damagedEntry(t, log)
	if e = d.apply(t, target{f, bytes.Clone(entry)}); e == nil {
		return log, at, nil
	}
	b := readFile(t, log)
	replaceFile(t, log, append(append(bytes.Clone(b[:at.Pos]), e...), b[at.Pos+int64(at.Size):]...))
	return log, at, e
}

// TestParallelMatrix: every format and damage of the corruption matrix,
// and the undamaged partition. CI runs one of the dumps and the writing
// commands on every third damage of each format, rotating, as
// TestCorruptionMatrix does; LOGTOOL_LONG=1 runs all.
func TestParallelMatrix(t *testing.T) {
	for fi, f := range allFormats() {
		t.Run(f.name, func(t *testing.T) {
			for di, d := range append([]logDamage{noDamage}, logDamages...) {
				dir := damaged(t, f, matrixOptions(f), d)
				if dir == "" {
					continue
				}
				t.Run(d.name, func(t *testing.T) { sameWithWorkers(t, f, dir, fi+di, long() || (fi+di)%3 == 0) })
			}
		})
	}
}

// TestParallelRuns: partitions whose segments make several of the reader's
// runs, so that runs are decoded out of order, damaged in the ways that
// stop a batch's decoding but not the reading.
func TestParallelRuns(t *testing.T) {
	for _, f := range []format{{"v2-gzip", 2, codec.Gzip}, {"v2-snappy", 2, codec.Snappy}, {"v2-lz4", 2, codec.LZ4},
		{"v2-zstd", 2, codec.Zstd}, {"v1-lz4", 1, codec.LZ4}} {
		o := matrixOptions(f)
		o.Records, o.Keys, o.SegmentBytes = 6000, 1000, 200_000
		t.Run(f.name, func(t *testing.T) {
			for di, d := range append([]logDamage{noDamage}, logDamages...) {
				switch d.name {
				case "none", "payload", "record-varint-flip", "key-length":
				case "crc", "payload-cut", "length":
					if !long() {
						continue
					}
				default:
					continue
				}
				if dir := damaged(t, f, o, d); dir != "" {
					t.Run(d.name, func(t *testing.T) { sameWithWorkers(t, f, dir, di, true) })
				}
			}
		})
	}
}

// sameWithWorkers runs the deep readers over dir with --workers 1 and 4:
// verify and, unless LOGTOOL_LONG=1 asks for all, the dump of the given
// turn; with writes, compact and upgrade on copies of dir.
func sameWithWorkers(t *testing.T, f format, dir string, turn int, writes bool) {
	part := onlyPartition(t, dir)
	dumps := [][]string{
		{"dump", "--deep-iteration", part},
		{"dump", "--deep-iteration", "--print-data-log", part},
		{"--format", "json", "dump", "--deep-iteration", "--print-data-log", part},
	}
	if !long() {
		dumps = dumps[turn%len(dumps) : turn%len(dumps)+1]
	}
	for _, args := range append(dumps, []string{"verify", "--deep", "--strict", dir}) {
		one := run(t, append([]string{"--workers", "1"}, args...)...)
		four := run(t, append([]string{"--workers", "4"}, args...)...)
		if one != four {
			t.Errorf("%s: --workers 4 differs from --workers 1:\n%s", strings.Join(args, " "), firstDifference(four, one))
		}
	}
	if !writes {
		return
	}
	cmds := [][]string{{"compact", "--now", compactNow}}
	if f.magic < 2 {
		cmds = append(cmds, []string{"upgrade", "--to-magic", "2"})
	}
	for _, args := range cmds {
		var outs [2]result
		var files [2]map[string]string
		for i, w := range []string{"1", "4"} {
			cp := filepath.Join(t.TempDir(), "kafka-logs")
			testutil.CopyTree(t, dir, cp)
			r := run(t, append(append([]string{"--workers", w}, args...), cp)...)
			r.stdout, r.stderr = strings.ReplaceAll(r.stdout, cp, "DIR"), strings.ReplaceAll(r.stderr, cp, "DIR")
			outs[i], files[i] = r, digest(t, cp)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: --workers 4 differs from --workers 1:\n%s", args[0], firstDifference(outs[1], outs[0]))
		}
		if d := diff(files[0], files[1], nil); len(d) > 0 {
			t.Errorf("%s: --workers 4 wrote other files than --workers 1: %v", args[0], d)
		}
	}
}

func firstDifference(got, want result) string {
	if got.code != want.code {
		return got.String() + "\nwant\n" + want.String()
	}
	for _, s := range [][2]string{{got.stdout, want.stdout}, {got.stderr, want.stderr}} {
		g, w := strings.Split(s[0], "\n"), strings.Split(s[1], "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				return "line " + g[i] + "\nwant " + w[i]
			}
		}
		if len(g) != len(w) {
			return clip(s[0], 1000) + "\nwant\n" + clip(s[1], 1000)
		}
	}
	return ""
}
