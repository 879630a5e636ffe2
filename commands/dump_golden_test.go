package commands

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// update rewrites golden files instead of comparing with them: `make golden`
// (go test ./commands/ -run Golden -update). It is the flag of every golden
// test in this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// sample is the committed sample log directory (scripts/make-sample.sh).
const sample = "../testdata/kafka-logs"

// goldenCase is one command line whose stdout, stderr and exit status are
// pinned in testdata/golden/<command>/<name>.golden. setup, when set, builds
// fixtures in dir; "$DIR" in args stands for it.
type goldenCase struct {
	name  string
	args  []string
	setup func(t *testing.T, dir string)
}

func TestDumpGolden(t *testing.T) { runGolden(t, "dump", dumpGoldenCases) }

// runGolden runs the cases, pinned in testdata/golden/<sub>/<name>.golden.
func runGolden(t *testing.T, sub string, cases []goldenCase) {
	if _, err := os.Stat(sample); err != nil {
		t.Fatalf("the committed sample %s is missing: %v", sample, err)
	}
	for _, c := range cases {
		// Not parallel: urfave/cli's help flag is a shared global that every
		// run sets.
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(t, dir)
			}
			args := []string{"logtool"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "$DIR", dir))
			}
			var stdout, stderr bytes.Buffer
			code := Run(args, strings.NewReader(""), &stdout, &stderr)
			if slices.Contains(args, "json") {
				checkJSONLines(t, stdout.Bytes())
			}
			got := transcript(c.args, code, stdout.String(), stderr.String(), dir)
			checkGolden(t, filepath.Join("testdata", "golden", sub, c.name+".golden"), got)
		})
	}
}

// transcript renders a run with the machine-dependent paths replaced: the
// fixture directory by $DIR, the sample's absolute path (in Kafka's reports)
// by $SAMPLE.
func transcript(args []string, code int, stdout, stderr, dir string) string {
	absSample, _ := filepath.Abs(sample)
	norm := func(s string) string {
		s = strings.ReplaceAll(s, dir, "$DIR")
		return strings.ReplaceAll(s, absSample, "$SAMPLE")
	}
	return fmt.Sprintf("$ logtool %s\nexit: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, norm(stdout), norm(stderr))
}

// checkJSONLines requires every line to be a JSON object with a "type" and
// a "file", the contract's two fields common to every object.
func checkJSONLines(t *testing.T, out []byte) {
	t.Helper()
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if _, ok := m["type"].(string); !ok {
			t.Fatalf("no type: %s", line)
		}
		file, ok := m["file"].(string)
		if !ok {
			t.Fatalf("no file: %s", line)
		}
		// A file in a partition directory names its partition, once.
		pd, err := layout.ParsePartitionDir(filepath.Base(filepath.Dir(file)))
		inPartition := err == nil && layout.LogDirOf(file, layout.KindFile) != filepath.Dir(file)
		if inPartition && (m["topic"] != pd.Topic || m["partition"] != float64(pd.Partition)) ||
			!inPartition && !aPartition(file) && m["type"] != "summary" && m["type"] != "checkpoint-entry" && m["topic"] != nil ||
			countOf(topKeys(t, line), "topic") > 1 {
			t.Fatalf("topic and partition of %s: %s", file, line)
		}
	}
}

// topKeys lists the names of a JSON object's own members in order, those
// of nested objects (a decoded payload's "topic") left out, so that a
// name given twice shows.
func topKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		if s, ok := tok.(string); ok && depth == 1 {
			keys = append(keys, s)
			// Skip the member's value, whatever it is.
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
		}
	}
}

func countOf(names []string, name string) int {
	n := 0
	for _, s := range names {
		if s == name {
			n++
		}
	}
	return n
}

// aPartition tells whether file names a partition directory, which the
// reports of commands that work on partitions (replay) name with its topic.
func aPartition(file string) bool {
	_, err := layout.ParsePartitionDir(filepath.Base(file))
	return err == nil
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `make golden` to create it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n(run `make golden` after an intended change)", path, i+1, g, w)
		}
	}
}

var dumpGoldenCases = []goldenCase{
	// Kafka-compatible lines of every message format, from the sample.
	{name: "v2-lz4-shallow", args: []string{"dump", sample + "/orders-0/00000000000000001458.log"}},
	{name: "v2-lz4-deep-data", args: []string{"dump", "--print-data-log", sample + "/orders-0/00000000000000001458.log"}},
	{name: "v2-zstd-deep", args: []string{"dump", "--deep-iteration", "--max-bytes", "3000", sample + "/user-profiles-0/00000000000000000000.log"}},
	{name: "v2-txn-control", args: []string{"dump", "--deep-iteration", sample + "/payments.txn-0/00000000000000001190.log"}},
	{name: "v1-gzip-deep", args: []string{"dump", "--deep-iteration", "--max-bytes", "1500", sample + "/clicks-v1-0/00000000000000000000.log"}},
	{name: "v0-deep-data", args: []string{"dump", "--print-data-log", "--max-bytes", "700", sample + "/legacy.events-v0-0/00000000000000000000.log"}},
	{name: "v0-snappy-deep", args: []string{"dump", "--deep-iteration", "--max-bytes", "1000", sample + "/legacy.events-v0-snappy-0/00000000000000000000.log"}},
	{name: "skip-record-metadata", args: []string{"dump", "--print-data-log", "--skip-record-metadata", "--max-bytes", "1500", sample + "/payments.txn-0/00000000000000000000.log"}},
	{name: "decoders-hex-base64", args: []string{"dump", "--key-decoder", "hex", "--value-decoder", "base64", "--max-bytes", "1100", sample + "/payments.txn-0/00000000000000000000.log"}},
	{name: "max-bytes-below-first-batch", args: []string{"dump", "--max-bytes", "100", sample + "/orders-0/00000000000000000712.log"}},
	{name: "index", args: []string{"dump", sample + "/orders-0/00000000000000000000.index"}},
	{name: "timeindex", args: []string{"dump", sample + "/payments.txn-0/00000000000000000236.timeindex"}},
	{name: "txnindex", args: []string{"dump", sample + "/payments.txn-0/00000000000000000236.txnindex"}},
	{name: "producer-snapshot", args: []string{"dump", sample + "/payments.txn-0/00000000000000001289.snapshot"}},
	{name: "small-files", args: []string{"dump", sample + "/meta.properties", sample + "/replication-offset-checkpoint",
		sample + "/orders-0/leader-epoch-checkpoint", sample + "/orders-0/partition.metadata"}},
	{name: "partition-dir", args: []string{"dump", sample + "/legacy.events-v0-snappy-0"}},
	{name: "log-dir-summary", args: []string{"dump", sample}},
	{name: "log-dir-summary-wide", args: []string{"--wide", "dump", sample}},
	{name: "file-summary", args: []string{"dump", "--summary", sample + "/orders-1/00000000000000000000.log", sample + "/clicks-v1-0/00000000000000000000.log"}},
	{name: "offset-range", args: []string{"dump", "--deep-iteration", "--from-offset", "1195", "--to-offset", "1201", sample + "/payments.txn-0"}},
	{name: "from-time", args: []string{"dump", "--from-time", "2024-01-01T00:20:00Z", "--to-offset", "1210", sample + "/orders-1"}},
	{name: "verify-index-only", args: []string{"dump", "--verify-index-only", sample + "/payments.txn-0"}},
	{name: "index-sanity-check", args: []string{"dump", "--index-sanity-check", sample + "/orders-0/00000000000000000712.index", sample + "/orders-0/00000000000000001458.index", sample + "/orders-0/00000000000000000712.timeindex"}},
	{name: "json-deep", args: []string{"--format", "json", "dump", "--print-data-log", "--from-offset", "1240", "--to-offset", "1251", sample + "/payments.txn-0/00000000000000001190.log"}},
	{name: "json-legacy-and-files", args: []string{"--format", "json", "dump", "--max-bytes", "600", sample + "/clicks-v1-0/00000000000000000000.log",
		sample + "/payments.txn-0/00000000000000001190.txnindex", sample + "/payments.txn-0/00000000000000001289.snapshot",
		sample + "/orders-0/00000000000000000712.index", sample + "/orders-0/00000000000000000712.timeindex", sample + "/log-start-offset-checkpoint",
		sample + "/orders-0/leader-epoch-checkpoint", sample + "/orders-0/partition.metadata", sample + "/meta.properties"}},
	{name: "json-cleaner-checkpoint", setup: func(t *testing.T, dir string) {
		write(t, dir, "orders-3/cleaner-checkpoint", []byte("1\n42 1700000000000\n"))
		write(t, dir, "cleaner-offset-checkpoint", []byte("0\n1\norders 3 42\n"))
	}, args: []string{"--format", "json", "dump", "$DIR/orders-3/cleaner-checkpoint", "$DIR/cleaner-offset-checkpoint"}},
	{name: "json-summary", args: []string{"--format", "json", "dump", "--summary", sample + "/orders-0", sample + "/legacy.events-v0-0"}},

	// Damage: reported with its position, the dump goes on.
	{name: "bad-crc", setup: damagedSegment(func(b []byte) []byte { b[500] ^= 0x40; return b }),
		args: []string{"dump", "--deep-iteration", "$DIR/t-0/00000000000000000000.log"}},
	{name: "bad-frame-resync", setup: damagedSegment(func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[420+8:], 3) // the second batch's size: below any minimum
		return b
	}), args: []string{"dump", "$DIR/t-0/00000000000000000000.log"}},
	{name: "oversized-frame-resync", setup: damagedSegment(func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[420+8:], 1<<30) // claims more than the file holds
		return b
	}), args: []string{"dump", "$DIR/t-0/00000000000000000000.log"}},
	{name: "torn-tail", setup: damagedSegment(func(b []byte) []byte { return b[:len(b)-100] }),
		args: []string{"dump", "$DIR/t-0/00000000000000000000.log"}},
	{name: "zero-tail", setup: damagedSegment(func(b []byte) []byte { return append(b, make([]byte, 4096)...) }),
		args: []string{"dump", "$DIR/t-0/00000000000000000000.log"}},
	{name: "garbage-only", setup: func(t *testing.T, dir string) {
		write(t, dir, "t-0/00000000000000000000.log", bytes.Repeat([]byte{0xa5}, 300))
	},
		args: []string{"dump", "$DIR/t-0/00000000000000000000.log"}},
	{name: "index-mismatch", setup: indexFixture, args: []string{"dump", "--verify-index-only", "$DIR/t-0"}},
	{name: "index-zero-tail", setup: indexFixture, args: []string{"dump", "$DIR/t-0/00000000000000000000.index", "$DIR/t-0/00000000000000000000.timeindex"}},
	{name: "empty-files", setup: func(t *testing.T, dir string) {
		for _, n := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex", "00000000000000000000.snapshot"} {
			write(t, dir, "t-0/"+n, nil)
		}
	}, args: []string{"dump", "$DIR/t-0"}},
	{name: "leftovers", setup: func(t *testing.T, dir string) {
		seg := readSample(t, "payments.txn-0/00000000000000001190.log")
		write(t, dir, "t-0/00000000000000000000.log", nil)
		write(t, dir, "t-0/00000000000000001190.log.deleted", seg[:600])
		write(t, dir, "t-0/leader-epoch-checkpoint.tmp", []byte("0\n"))
		write(t, dir, "t-0/notes.txt", []byte("hello\n"))
	}, args: []string{"dump", "$DIR/t-0"}},
	{name: "unknown-file", setup: func(t *testing.T, dir string) { write(t, dir, "notes.txt", []byte("hello\n")) },
		args: []string{"dump", "$DIR/notes.txt"}},
	{name: "not-kafka-dir", setup: func(t *testing.T, dir string) { write(t, dir, "misc/notes.txt", []byte("hello\n")) },
		args: []string{"dump", "$DIR/misc"}},
	{name: "missing-path", args: []string{"dump", "no/such/dir"}},
	{name: "bad-decoder", args: []string{"dump", "--key-decoder", "avro", sample}},

	// Coordinator and KRaft logs, built by kraftFixture and friends.
	{name: "offsets-decoder", setup: offsetsFixture, args: []string{"dump", "--offsets-decoder", "$DIR/__consumer_offsets-0/00000000000000000000.log"}},
	{name: "offsets-decoder-json", setup: offsetsFixture, args: []string{"--format", "json", "dump", "--offsets-decoder", "$DIR/__consumer_offsets-0/00000000000000000000.log"}},
	{name: "remote-log-metadata-decoder", setup: remoteMetaFixture, args: []string{"dump", "--remote-log-metadata-decoder", "$DIR/__remote_log_metadata-0/00000000000000000000.log"}},
	{name: "remote-log-metadata-decoder-json", setup: remoteMetaFixture, args: []string{"--format", "json", "dump", "--remote-log-metadata-decoder", "$DIR/__remote_log_metadata-0/00000000000000000000.log"}},
	{name: "share-group-state-decoder", setup: shareStateFixture, args: []string{"dump", "--share-group-state-decoder", "$DIR/__share_group_state-0/00000000000000000000.log"}},
	{name: "share-group-state-decoder-json", setup: shareStateFixture, args: []string{"--format", "json", "dump", "--share-group-state-decoder", "$DIR/__share_group_state-0/00000000000000000000.log"}},
	{name: "transaction-log-decoder", setup: txnLogFixture, args: []string{"dump", "--transaction-log-decoder", "$DIR/__transaction_state-0/00000000000000000000.log"}},
	{name: "cluster-metadata", setup: kraftFixture, args: []string{"dump", "--summary=false", "--cluster-metadata-decoder", "$DIR"}},
	{name: "kraft-control-only", setup: kraftFixture, args: []string{"dump", "--deep-iteration", "$DIR/__cluster_metadata-0/00000000000000000007-0000000002.checkpoint"}},
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sample, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// damagedSegment copies the first 3000 bytes of a sample segment (whole
// batches: its first seven) and damages them.
func damagedSegment(damage func([]byte) []byte) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		seg := readSample(t, "payments.txn-0/00000000000000000000.log")
		sr := logfmt.NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "")
		end := 0
		for sr.Next() && sr.Pos() <= 3000 {
			end = int(sr.Pos())
		}
		write(t, dir, "t-0/00000000000000000000.log", damage(append([]byte(nil), seg[:end]...)))
	}
}

// indexFixture writes a segment whose .index has one wrong entry and a
// preallocated zero tail, and whose .timeindex has a wrong timestamp, an
// offset inside a batch and a zero tail.
func indexFixture(t *testing.T, dir string) {
	seg := readSample(t, "payments.txn-0/00000000000000000000.log")
	write(t, dir, "t-0/00000000000000000000.log", seg)
	ix := readSample(t, "payments.txn-0/00000000000000000000.index")
	binary.BigEndian.PutUint32(ix[8+4:], binary.BigEndian.Uint32(ix[8+4:])+78) // second entry: the next batch's position
	write(t, dir, "t-0/00000000000000000000.index", append(ix, make([]byte, 80)...))
	tix := readSample(t, "payments.txn-0/00000000000000000000.timeindex")
	binary.BigEndian.PutUint64(tix[24:], binary.BigEndian.Uint64(tix[24:])-5)     // third entry's timestamp
	binary.BigEndian.PutUint32(tix[36+8:], binary.BigEndian.Uint32(tix[36+8:])+1) // fourth entry's offset
	write(t, dir, "t-0/00000000000000000000.timeindex", append(tix, make([]byte, 120)...))
}

// enc builds the binary encoding of Kafka's generated messages by hand, for
// fixtures the decoders must read.
type enc []byte

func (e enc) i8(v int8) enc    { return append(e, byte(v)) }
func (e enc) i16(v int16) enc  { return binary.BigEndian.AppendUint16(e, uint16(v)) }
func (e enc) i32(v int32) enc  { return binary.BigEndian.AppendUint32(e, uint32(v)) }
func (e enc) i64(v int64) enc  { return binary.BigEndian.AppendUint64(e, uint64(v)) }
func (e enc) uv(v int) enc     { return binary.AppendUvarint(e, uint64(v)) }
func (e enc) str(s string) enc { return append(e.i16(int16(len(s))), s...) } // non-flexible
func (e enc) cstr(s string) enc {
	return append(e.uv(len(s)+1), s...) // flexible
}
func (e enc) bytes32(b []byte) enc {
	if b == nil {
		return e.i32(-1)
	}
	return append(e.i32(int32(len(b))), b...)
}
func (e enc) uuid(b byte) enc { return append(e, bytes.Repeat([]byte{b}, 16)...) }
func (e enc) notags() enc     { return e.uv(0) }

// segment writes one .log of the given batches.
func segment(t *testing.T, dir, name string, batches ...[]byte) {
	write(t, dir, name, bytes.Join(batches, nil))
}

func batch(t *testing.T, o logfmt.BatchOptions, recs ...logfmt.Record) []byte {
	t.Helper()
	for i := range recs {
		recs[i].Offset = o.BaseOffset + int64(i)
		recs[i].Timestamp = 1_700_000_000_000 + recs[i].Offset
	}
	b, err := logfmt.AppendBatch(nil, o, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func offsetsFixture(t *testing.T, dir string) {
	key1 := enc(nil).i16(1).str("group-a").str("orders").i32(3)
	sub := enc(nil).i16(1).i32(1).str("orders").bytes32(nil).i32(1).str("orders").i32(1).i32(3)
	asg := enc(nil).i16(1).i32(1).str("orders").i32(2).i32(0).i32(3).bytes32([]byte{1, 2})
	member := enc(nil).str("member-1").i16(-1).str("client-1").str("/10.0.0.1").i32(300000).i32(45000).bytes32(sub).bytes32(asg)
	gm := enc(nil).i16(3).str("consumer").i32(7).str("range").str("member-1").i64(1_700_000_000_500).i32(1)
	gm = append(gm, member...)
	recs := []logfmt.Record{
		{Key: key1, Value: enc(nil).i16(3).i64(42).i32(5).str("").i64(1_700_000_000_100)},
		{Key: enc(nil).i16(0).str("old-group").str("clicks").i32(0), Value: enc(nil).i16(1).i64(7).str("meta").i64(1_600_000_000_000).i64(1_600_086_400_000)},
		{Key: enc(nil).i16(1).str("group-a").str("orders").i32(4), Value: enc(nil).i16(4).i64(43).i32(5).cstr("m").i64(1_700_000_000_200).notags()},
		{Key: enc(nil).i16(2).str("group-a"), Value: gm},
		{Key: enc(nil).i16(2).str("group-b"), Value: nil},
		{Key: enc(nil).i16(9).str("raw"), Value: enc(nil).i16(0).i32(1)},
		{Key: enc(nil).i16(99), Value: []byte{0}},
		{Key: enc(nil).i16(1).str("truncated"), Value: enc(nil).i16(3)},
	}
	// The consumer group protocol's records (KIP-848), each value version 0
	// and flexible; topic ids are 16 bytes of 7.
	memberKey := func(typ int16) enc { return enc(nil).i16(typ).str("group-c").str("member-2") }
	cg := []logfmt.Record{
		{Key: enc(nil).i16(3).str("group-c"), Value: enc(nil).i16(0).i32(4).uv(1).uv(0).uv(8).i64(-77)}, // tagged metadataHash
		{Key: enc(nil).i16(4).str("group-c"), Value: enc(nil).i16(0).uv(2).uuid(7).cstr("orders").i32(6).uv(1).notags().notags()},
		{Key: memberKey(5), Value: enc(nil).i16(0).uv(0).cstr("rack-a").cstr("client-2").cstr("/10.0.0.2").uv(2).cstr("orders").uv(0).i32(300000).cstr("uniform").notags()},
		{Key: enc(nil).i16(6).str("group-c"), Value: enc(nil).i16(0).i32(4).notags()},
		{Key: memberKey(7), Value: enc(nil).i16(0).uv(2).uuid(7).uv(3).i32(0).i32(5).notags().notags()},
		{Key: memberKey(8), Value: enc(nil).i16(0).i32(4).i32(3).i8(0).uv(2).uuid(7).uv(2).i32(0).notags().uv(1).notags()},
		{Key: enc(nil).i16(16).str("group-c").str("ord.*"), Value: enc(nil).i16(0).uv(2).cstr("orders").i64(2).i64(1_700_000_000_900).notags()},
		{Key: memberKey(8), Value: nil},
	}
	// Share (KIP-932) and streams (KIP-1071) group records as Kafka 4.1
	// writes them; type 18, gone before 4.1, is unknown.
	sg := []logfmt.Record{
		{Key: enc(nil).i16(11).str("share-g"), Value: enc(nil).i16(0).i32(2).i64(99).notags()},
		{Key: enc(nil).i16(14).str("share-g").str("member-3"), Value: enc(nil).i16(0).i32(2).i32(1).i8(0).uv(2).uuid(7).uv(2).i32(1).notags().notags()},
		{Key: enc(nil).i16(17).str("app"), Value: enc(nil).i16(0).i32(5).i64(123).notags()},
		{Key: enc(nil).i16(21).str("app").str("member-4"), Value: enc(nil).i16(0).uv(2).cstr("0").uv(2).i32(0).notags().uv(1).uv(1).notags()},
		{Key: enc(nil).i16(18).str("app"), Value: enc(nil).i16(0).uv(1).notags()},
	}
	o := logfmt.DefaultBatchOptions(0)
	o2 := logfmt.DefaultBatchOptions(int64(len(recs)))
	o3 := logfmt.DefaultBatchOptions(int64(len(recs) + len(cg)))
	segment(t, dir, "__consumer_offsets-0/00000000000000000000.log", batch(t, o, recs...), batch(t, o2, cg...), batch(t, o3, sg...))
}

func remoteMetaFixture(t *testing.T, dir string) {
	tip := func(e enc) enc { return e.cstr("orders").uuid(7).i32(3).notags() }
	segID := func(e enc) enc { return tip(e).uuid(9).notags() }
	segment(t, dir, "__remote_log_metadata-0/00000000000000000000.log", batch(t, logfmt.DefaultBatchOptions(0),
		logfmt.Record{Value: segID(metadataRecord(0, 0, nil)).i64(0).i64(499).i32(1).i64(1_700_000_000_000).i64(1_700_000_001_000).
			uv(2).i32(4).i64(0).notags().i32(1_048_576).uv(0).i8(0).notags()},
		logfmt.Record{Value: segID(metadataRecord(1, 0, nil)).i32(1).i64(1_700_000_002_000).uv(3).i8(1).i8(2).i8(1).notags()},
		logfmt.Record{Value: tip(metadataRecord(2, 0, nil)).i32(3000).i64(1_700_000_003_000).i8(0).notags()},
		logfmt.Record{Value: metadataRecord(9, 0, nil)},
	))
}

func shareStateFixture(t *testing.T, dir string) {
	key := func(typ int16, group string) enc { return enc(nil).i16(typ).str(group).uuid(7).i32(0) }
	stateBatch := func(e enc, first, last int64, state int8, count int16) enc {
		return e.i64(first).i64(last).i8(state).i16(count).notags()
	}
	snapshot := enc(nil).i16(0).i32(0).i32(1).i32(2).i64(10).i64(1_700_000_000_000).i64(1_700_000_000_500).uv(3)
	snapshot = stateBatch(stateBatch(snapshot, 10, 14, 2, 1), 15, 19, 0, 3).notags()
	update := stateBatch(enc(nil).i16(0).i32(0).i32(2).i64(-1).uv(2), 20, 24, 4, 5).notags()
	segment(t, dir, "__share_group_state-0/00000000000000000000.log", batch(t, logfmt.DefaultBatchOptions(0),
		logfmt.Record{Key: key(0, "share-a"), Value: snapshot},
		logfmt.Record{Key: key(1, "share-a"), Value: update},
		logfmt.Record{Key: key(0, "share-b"), Value: nil},
		logfmt.Record{Key: enc(nil).i16(2).str("share-c"), Value: enc(nil).i16(0)},
	))
}

func txnLogFixture(t *testing.T, dir string) {
	v0 := enc(nil).i16(0).i64(5000).i16(0).i32(60000).i8(1).i32(1).str("payments").i32(2).i32(0).i32(1).i64(1_700_000_000_000).i64(1_699_999_999_000)
	v1 := enc(nil).i16(1).i64(5001).i16(3).i32(60000).i8(4).uv(0).i64(1_700_000_001_000).i64(-1)
	v1 = append(v1.uv(1).uv(0).uv(8), enc(nil).i64(5000)...) // tagged previousProducerId
	o := logfmt.DefaultBatchOptions(0)
	segment(t, dir, "__transaction_state-0/00000000000000000000.log", batch(t, o,
		logfmt.Record{Key: enc(nil).i16(0).str("txn-1"), Value: v0},
		logfmt.Record{Key: enc(nil).i16(0).str("txn-2"), Value: v1},
		logfmt.Record{Key: enc(nil).i16(0).str("txn-3"), Value: nil},
	))
}

// metadataRecord frames a metadata record as MetadataRecordSerde does.
func metadataRecord(apiKey, version int, body enc) []byte {
	return append(enc(nil).uv(1).uv(apiKey).uv(version), body...)
}

func kraftFixture(t *testing.T, dir string) {
	leaderChange := enc(nil).i16(0).i32(1).uv(2).i32(1).notags().uv(2).i32(1).notags().notags()
	control := func(base int64, ct logfmt.ControlType, value []byte) []byte {
		o := logfmt.DefaultBatchOptions(base)
		o.Control, o.PartitionLeaderEpoch = true, 1
		return batch(t, o, logfmt.Record{Key: logfmt.ControlKey(ct), Value: value})
	}
	topic := metadataRecord(2, 0, enc(nil).cstr("orders").uuid(7).notags())
	part := metadataRecord(3, 0, enc(nil).i32(0).uuid(7).uv(2).i32(1).uv(2).i32(1).uv(1).uv(1).i32(1).i32(0).i32(0).
		uv(1).uv(0).uv(1).i8(1))
	feature := metadataRecord(12, 0, enc(nil).cstr("metadata.version").i16(19).notags())
	config := metadataRecord(4, 0, enc(nil).i8(2).cstr("orders").cstr("cleanup.policy").uv(0).notags())
	change := metadataRecord(5, 0, enc(nil).i32(0).uuid(7).uv(1).uv(1).uv(4).i32(2))
	acl := metadataRecord(18, 0, enc(nil).uuid(9).i8(2).cstr("orders").i8(3).cstr("User:alice").cstr("*").i8(3).i8(3).notags())
	bad := []byte{2, 0, 0}
	data := logfmt.DefaultBatchOptions(1)
	data.PartitionLeaderEpoch = 1
	records := batch(t, data,
		logfmt.Record{Value: feature}, logfmt.Record{Value: topic}, logfmt.Record{Value: part},
		logfmt.Record{Value: config}, logfmt.Record{Value: change}, logfmt.Record{Value: acl},
		logfmt.Record{Value: metadataRecord(20, 0, enc(nil).notags())}, logfmt.Record{Value: bad})
	segment(t, dir, "__cluster_metadata-0/00000000000000000000.log", control(0, logfmt.ControlLeaderChange, leaderChange), records)

	header := enc(nil).i16(0).i64(1_700_000_000_009).notags()
	footer := enc(nil).i16(0).notags()
	kraftVersion := enc(nil).i16(0).i16(1).notags()
	voters := enc(nil).i16(0).uv(2).i32(1).uuid(3).uv(2).cstr("CONTROLLER").cstr("localhost").i16(9093).notags().i16(0).i16(1).notags().notags().notags()
	snap := logfmt.DefaultBatchOptions(3)
	snap.PartitionLeaderEpoch = 2
	segment(t, dir, "__cluster_metadata-0/00000000000000000007-0000000002.checkpoint",
		control(0, logfmt.ControlSnapshotHeader, header), control(1, logfmt.ControlKRaftVersion, kraftVersion),
		control(2, logfmt.ControlKRaftVoters, voters),
		batch(t, snap, logfmt.Record{Value: feature}, logfmt.Record{Value: topic}),
		control(5, logfmt.ControlSnapshotFooter, footer))
	segment(t, dir, "bootstrap.checkpoint", control(0, logfmt.ControlSnapshotHeader, header),
		batch(t, logfmt.DefaultBatchOptions(1), logfmt.Record{Value: feature}), control(2, logfmt.ControlSnapshotFooter, footer))
	write(t, dir, "__cluster_metadata-0/quorum-state",
		[]byte(`{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`))
	write(t, dir, "meta.properties", []byte("#\n#Thu Jan 01 00:00:00 UTC 2024\nnode.id=1\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"))
}

// TestTablesFitATerminal: every text table a command prints over the
// sample fits 120 columns unless --wide asks for every column.
func TestTablesFitATerminal(t *testing.T) {
	const now = "2024-02-01T00:00:00Z"
	s := usageSample(t)
	for _, args := range [][]string{
		{"dump", s}, {"verify", s}, {"reindex", "--check", s}, {"reindex", "--dry-run", s},
		{"upgrade", "--dry-run", s}, {"migrate-checkpoints", "--dry-run", s},
		{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "1h", "--now", now, s},
		{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "1h", "--now", now, s},
		{"grep", "--max-lag", "60d", "--now", now, s},
		{"replay", "--dry-run", s},
	} {
		_, out, _ := runArgs(args...)
		for line := range strings.Lines(out) {
			// Table rows: cells apart by two spaces or more; prose wraps.
			if strings.Count(line, "  ") < 2 {
				continue
			}
			if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > 120 {
				t.Errorf("%q: a line of %d columns: %q", args, n, line)
				break
			}
		}
	}
}
