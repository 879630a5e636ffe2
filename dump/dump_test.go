package dump

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

var samples = kafkasamples.Dir()

// object is one line of JSON output.
type object map[string]any

func (o object) str(k string) string { s, _ := o[k].(string); return s }
func (o object) num(k string) int64  { f, _ := o[k].(float64); return int64(f) }

// runJSON dumps paths as JSON Lines and parses every line, failing on any
// line that is not a JSON object with a "type" and a "file".
func runJSON(t *testing.T, o Options, paths ...string) (Result, []object) {
	t.Helper()
	return runJSONSet(t, o, resolve(t, paths...))
}

func runJSONSet(t *testing.T, o Options, set *target.Set) (Result, []object) {
	t.Helper()
	o.JSON = true
	var out, errOut bytes.Buffer
	res, err := Run(set, o, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m object
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Bytes())
		}
		if m.str("type") == "" || m.str("file") == "" {
			t.Fatalf("no type or file: %s", sc.Bytes())
		}
		objs = append(objs, m)
	}
	if errOut.Len() > 0 {
		t.Fatalf("JSON mode wrote to stderr: %s", errOut.String())
	}
	return res, objs
}

func ofType(objs []object, typ string) []object {
	var out []object
	for _, o := range objs {
		if o.str("type") == typ {
			out = append(out, o)
		}
	}
	return out
}

// TestKafkaSamples dumps every file written by real brokers: nothing may be
// reported as damaged except the record set whose CRC its source altered.
func TestKafkaSamples(t *testing.T) {
	if _, err := os.Stat(samples); err != nil {
		kafkasamples.Skip(t, err)
	}
	logdirs, _ := filepath.Glob(filepath.Join(samples, "logdirs", "*"))
	sets, _ := filepath.Glob(filepath.Join(samples, "record-sets", "*", "*.records"))
	for _, path := range append(logdirs, sets...) {
		if fi, err := os.Stat(path); err != nil || (!fi.IsDir() && !strings.HasSuffix(path, ".records")) {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			o := DefaultOptions()
			o.Deep, o.PrintData, o.Summary, o.Workers = true, true, true, 4
			res, objs := runJSON(t, o, path)
			damaged := strings.Contains(path, "invalid_crc")
			probs := ofType(objs, "problem")
			if damaged {
				if res.Problems != 1 || !strings.Contains(probs[0].str("message"), "checksum mismatch") {
					t.Fatalf("want the one CRC failure, got %v", probs)
				}
				return
			}
			if res.Problems != 0 || len(probs) != 0 {
				t.Fatalf("%d problems: %v", res.Problems, probs)
			}
			if res.Readable == 0 || len(ofType(objs, "record")) == 0 {
				t.Fatalf("nothing read: %+v", res)
			}
			// The same in text, where Kafka's index reports count as damage
			// only when the entry is wrong for lookups.
			o.JSON = false
			res, err := Run(resolve(t, path), o, io.Discard, io.Discard)
			if err != nil || res.Problems != 0 {
				t.Fatalf("text: %v %+v", err, res)
			}
			o = DefaultOptions()
			o.VerifyIndexOnly = true
			if res, err := Run(resolve(t, path), o, io.Discard, io.Discard); err != nil || res.IndexProblems != 0 {
				t.Fatalf("--verify-index-only: %v %+v", err, res)
			}
		})
	}
	// The coordinator and metadata decoders on their own topics.
	for pattern, payload := range map[string]Payload{
		"__consumer_offsets-*":  PayloadOffsets,
		"__transaction_state-*": PayloadTxnLog,
		"__cluster_metadata-*":  PayloadMetadata,
		"bootstrap.checkpoint":  PayloadMetadata,
	} {
		dirs, _ := filepath.Glob(filepath.Join(samples, "logdirs", "*", pattern))
		for _, d := range dirs {
			o := DefaultOptions()
			o.PrintData, o.Payload = true, payload
			res, objs := runJSON(t, o, d)
			if res.Problems != 0 {
				t.Errorf("%s: %v", d, ofType(objs, "problem"))
			}
			for _, r := range ofType(objs, "record") {
				if v, ok := r["value"].(string); ok && strings.HasPrefix(v, "Error") {
					t.Errorf("%s offset %d: %s", d, r.num("offset"), v)
				}
				// Decoded payloads are nested JSON, so that jq reaches
				// into them (.key.data.group); a tombstone is null.
				_, keyObj := r["key"].(map[string]any)
				value, valueObj := r["value"].(map[string]any)
				if _, control := r["control"]; !control && (!valueObj && r["value"] != nil || payload != PayloadMetadata && !keyObj) {
					t.Errorf("%s offset %d: key %#v, value %#v: want JSON objects", d, r.num("offset"), r["key"], r["value"])
				}
				if data, _ := value["data"].(map[string]any); payload == PayloadMetadata && valueObj && data == nil {
					t.Errorf("%s offset %d: value without data: %v", d, r.num("offset"), value)
				}
			}
		}
	}
}

// segmentOf builds a segment of n v2 batches of three records each and
// returns it with the position of every batch.
func segmentOf(t *testing.T, n int) ([]byte, []int64) {
	t.Helper()
	var seg []byte
	var pos []int64
	for i := 0; i < n; i++ {
		o := logfmt.DefaultBatchOptions(int64(3 * i))
		var recs []logfmt.Record
		for j := 0; j < 3; j++ {
			off := int64(3*i + j)
			recs = append(recs, logfmt.Record{Offset: off, Timestamp: 1000 + off, Key: []byte("k"), Value: bytes.Repeat([]byte{'v'}, 50)})
		}
		pos = append(pos, int64(len(seg)))
		var err error
		if seg, err = logfmt.AppendBatch(seg, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	return seg, pos
}

func writeFile(t *testing.T, b []byte) string { return writeSegment(t, 0, b) }

// writeSegment writes b as the segment with base offset base of a
// partition directory t-0.
func writeSegment(t *testing.T, base int64, b []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, layout.SegmentName(base, layout.LogExt))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDamage checks that damage is reported where it is and that every
// batch that can still be read is.
func TestDamage(t *testing.T) {
	seg, pos := segmentOf(t, 4)
	for _, c := range []struct {
		name     string
		damage   func([]byte) []byte
		problems []int64 // positions
		batches  []int64 // positions of the batches dumped
		notes    int
	}{
		{"intact", func(b []byte) []byte { return b }, nil, pos, 0},
		{"payload bit flip", func(b []byte) []byte { b[pos[1]+70] ^= 1; return b }, []int64{pos[1]}, pos, 0},
		{"size below minimum", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[2]+8:], 2); return b },
			[]int64{pos[2]}, []int64{pos[0], pos[1], pos[3]}, 1},
		{"unknown magic", func(b []byte) []byte { b[pos[1]+16] = 7; return b },
			[]int64{pos[1] + 16}, []int64{pos[0], pos[2], pos[3]}, 1},
		{"size past the end", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[1]+8:], 1<<20); return b },
			[]int64{pos[1]}, []int64{pos[0], pos[2], pos[3]}, 1},
		{"garbage before the first batch", func(b []byte) []byte { return append(bytes.Repeat([]byte{0xee}, 30), b...) },
			[]int64{0}, []int64{30 + pos[0], 30 + pos[1], 30 + pos[2], 30 + pos[3]}, 1},
		// Outside the checksum; dump checks the header as verify does
		// (Batch.CheckHeader), where before it only knew codecs and counts.
		{"leader epoch below -1", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[1]+12:], 0xfffffffe); return b },
			[]int64{pos[1] + 12}, pos, 0},
		{"torn tail", func(b []byte) []byte { return b[:len(b)-10] }, []int64{pos[3]}, pos[:3], 0},
		{"zero tail", func(b []byte) []byte { return append(b, make([]byte, 100)...) }, nil, pos, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, c.damage(append([]byte(nil), seg...)))
			o := DefaultOptions()
			o.Deep = true
			res, objs := runJSON(t, o, path)
			var got []int64
			for _, p := range ofType(objs, "problem") {
				got = append(got, p.num("position"))
			}
			if !equal(got, c.problems) || res.Problems != len(c.problems) {
				t.Errorf("problems at %v (%d), want %v", got, res.Problems, c.problems)
			}
			got = nil
			for _, b := range ofType(objs, "batch") {
				got = append(got, b.num("position"))
			}
			if !equal(got, c.batches) {
				t.Errorf("batches at %v, want %v", got, c.batches)
			}
			if n := len(ofType(objs, "note")); n != c.notes {
				t.Errorf("%d notes, want %d: %v", n, c.notes, ofType(objs, "note"))
			}
			if res.Readable != 1 {
				t.Errorf("readable %d", res.Readable)
			}
		})
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNothingReadable: a file with no valid byte is not readable, which
// the command turns into exit status 1.
func TestNothingReadable(t *testing.T) {
	path := writeFile(t, bytes.Repeat([]byte{0x5a}, 100))
	res, err := Run(resolve(t, path), DefaultOptions(), io.Discard, io.Discard)
	if err != nil || res.Readable != 0 || res.Problems != 1 || res.Files != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

// resolve resolves paths as logtool dump does.
func resolve(t testing.TB, paths ...string) *target.Set {
	t.Helper()
	set, err := target.Resolve(paths, target.Options{Command: "dump", Takes: target.Files | target.Partitions | target.LogDirs})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// generated writes a log directory with gen.
func generated(t testing.TB, o gen.Options) string {
	t.Helper()
	o.Out = filepath.Join(t.TempDir(), "logs")
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	return o.Out
}

// output is what dumping paths with o prints: stdout, then stderr.
func output(t *testing.T, o Options, paths ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if _, err := Run(resolve(t, paths...), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	return out.String() + "\n--\n" + errOut.String()
}

// TestWorkersKeepOrder: partitions dumped in parallel print exactly what a
// single worker prints.
func TestWorkersKeepOrder(t *testing.T) {
	dir := generated(t, gen.Options{TopicCount: 3, Partitions: 3, Records: 300, Magic: 2, Compression: codec.Snappy,
		SegmentBytes: 8192, TransactionalRatio: 0.3, AbortRatio: 0.3, Seed: 3})
	run := func(workers int) string {
		o := DefaultOptions()
		o.Deep, o.Summary, o.Workers = true, true, workers
		return output(t, o, dir)
	}
	one := run(1)
	for i := 0; i < 3; i++ {
		if got := run(8); got != one {
			t.Fatal("parallel output differs from sequential")
		}
	}
}

// TestBatchWorkers: a partition dumped alone, named or with its log
// directory (whose root files are a job of their own), gets every worker
// for its batches; several share them.
func TestBatchWorkers(t *testing.T) {
	one := generated(t, gen.Options{Topics: []string{"a"}, Records: 10})
	two := generated(t, gen.Options{Topics: []string{"a"}, Partitions: 2, Records: 10})
	for _, c := range []struct {
		paths []string
		want  int
	}{
		{[]string{one}, 4},
		{[]string{filepath.Join(one, "a-0")}, 4},
		{[]string{filepath.Join(one, "a-0", "00000000000000000000.log")}, 4},
		{[]string{two}, 2},
		{[]string{one, two}, 1},
	} {
		o := DefaultOptions()
		var jobs []*job
		for _, it := range resolve(t, c.paths...).Items {
			jobs = append(jobs, plan(it, &o)...)
		}
		if got := batchWorkers(jobs, 4); got != c.want {
			t.Errorf("%v: %d batch workers of 4, want %d", c.paths, got, c.want)
		}
	}
}

// TestMemoryFlat: dumping allocates the same whatever the segment size, so
// memory cannot grow with it.
func TestMemoryFlat(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("generates 24 MB; allocation counts mean nothing under the race detector")
	}
	alloc := func(records int) uint64 {
		dir := generated(t, gen.Options{Topics: []string{"m"}, Records: records, Magic: 2, Compression: codec.LZ4, Seed: 1})
		o := DefaultOptions()
		o.Deep, o.PrintData, o.JSON = true, true, true
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Run(resolve(t, filepath.Join(dir, "m-0", "00000000000000000000.log")), o, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(2_000), alloc(200_000)
	if large > 2*small+(1<<20) {
		t.Fatalf("a 100 times larger segment allocates %d bytes against %d", large, small)
	}
}

func TestDecoders(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		dec  textdec.Decoder
		text string
		json string
	}{
		{[]byte("héllo"), textdec.String, "héllo", `"héllo"`},
		// Text as Kafka prints it; JSON keeps the bytes, marked.
		{[]byte{'a', 0xff, '"'}, textdec.String, "a\uFFFD\"", `{"base64":"Yf8i"}`},
		{[]byte{0, 0xab}, textdec.Hex, "00ab", `"00ab"`},
		{[]byte("hi"), textdec.Base64, "aGk=", `"aGk="`},
		{nil, textdec.Hex, "", "null"},
	} {
		if c.in != nil {
			if got := string(c.dec.AppendText(nil, c.in)); got != c.text {
				t.Errorf("%v %q: text %q, want %q", c.dec, c.in, got, c.text)
			}
		}
		if got := string(c.dec.AppendJSON(nil, c.in)); got != c.json {
			t.Errorf("%v %q: JSON %s, want %s", c.dec, c.in, got, c.json)
		}
	}
	for _, n := range []string{"string", "hex", "base64", "none"} {
		if d, err := textdec.Parse(n); err != nil || d.String() != n {
			t.Errorf("textdec.Parse(%q) = %v, %v", n, d, err)
		}
	}
	if _, err := textdec.Parse("avro"); err == nil {
		t.Error("textdec.Parse(avro): want an error")
	}
}

func TestDecrementSequence(t *testing.T) {
	for _, c := range [][3]int32{{10, 3, 7}, {2, 5, 2147483645}, {0, 0, 0}, {5, 5, 0}} {
		if got := decrementSequence(c[0], c[1]); got != c[2] {
			t.Errorf("decrementSequence(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// FuzzDumpSegment dumps arbitrary bytes as a segment, deep and with data, in
// text and JSON: no panic, no hang, every JSON line valid.
func FuzzDumpSegment(f *testing.F) {
	seg, _ := segmentOf(&testing.T{}, 2)
	f.Add(seg)
	f.Add(logfmt.AppendLegacyMessage(nil, 1, 7, 0, 1000, []byte("k"), []byte("v")))
	f.Add(logfmt.AppendLegacyMessage(nil, 0, 0, 0, -1, nil, []byte("hello")))
	f.Add(append(seg[:40:40], make([]byte, 30)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "t-0")
		os.MkdirAll(dir, 0o755)
		p := filepath.Join(dir, "00000000000000000000.log")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.Deep, o.PrintData = true, true
		if _, err := Run(resolve(t, p), o, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		runJSON(t, o, p)
	})
}

// TestDeepTextMatchesJSON: deep text lines are formatted on a second
// goroutine from what the dumper queued, JSON objects directly from the
// records; both must show the same records in the same order, across
// blocks (batches larger than blockRecords) and with control records.
func TestDeepTextMatchesJSON(t *testing.T) {
	dir := generated(t, gen.Options{Topics: []string{"p"}, Records: 7000, Magic: 2, BatchRecords: 3000,
		Keys: 50, TombstoneRatio: 0.1, TransactionalRatio: 0.5, AbortRatio: 0.5, Seed: 5})
	path := filepath.Join(dir, "p-0", "00000000000000000000.log")
	o := DefaultOptions()
	o.Deep = true
	_, objs := runJSON(t, o, path)
	var want []string
	for _, r := range objs {
		if r.str("type") != "record" {
			continue
		}
		var keys []string
		for _, h := range r["headers"].([]any) {
			keys = append(keys, h.(map[string]any)["key"].(string))
		}
		line := fmt.Sprintf("| offset: %d CreateTime: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
			r.num("offset"), r.num("timestamp"), r.num("keySize"), r.num("valueSize"), r.num("sequence"), strings.Join(keys, ","))
		if c, ok := r["control"].(map[string]any); ok {
			line += fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %v", c["type"], c["coordinatorEpoch"])
		}
		want = append(want, line)
	}
	var out, errOut bytes.Buffer
	if _, err := Run(resolve(t, path), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "| ") {
			got = append(got, l)
		}
	}
	if len(want) < 7000 || len(got) != len(want) {
		t.Fatalf("%d record lines, %d JSON records", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if errOut.Len() > 0 {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

// TestSummaryFitsWithLongNames: partition names of 80 characters (Confluent
// Control Center's) are cut in their middle in the narrow table, so that
// it fits 120 columns; --wide keeps them whole.
func TestSummaryFitsWithLongNames(t *testing.T) {
	name := "_confluent-controlcenter-5-1-2-1-MonitoringMessageAggregatorWindows-THREE_HOURS-changelog"
	rows := []*row{{topic: name, partition: 11, first: 0, last: 99, firstTs: noTs, lastTs: noTs}, {topic: "t", partition: 0, firstTs: noTs, lastTs: noTs}}
	for _, wide := range []bool{false, true} {
		var b strings.Builder
		if err := writeTable(&b, rows, wide); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		longest := 0
		for line := range strings.Lines(out) {
			longest = max(longest, utf8.RuneCountInString(strings.TrimSuffix(line, "\n")))
		}
		switch {
		case !wide && (longest > 120 || !strings.Contains(out, "…RS-changelog-11")):
			t.Errorf("narrow: %d columns\n%s", longest, out)
		case wide && !strings.Contains(out, name+"-11"):
			t.Errorf("wide: the name is cut\n%s", out)
		}
	}
}
