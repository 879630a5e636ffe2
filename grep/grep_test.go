package grep

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkatest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// match is a match line as a script reads it.
type match struct {
	Offset   int64
	Status   string
	Key      []byte
	Value    []byte
	Txn      string
	Segment  string
	Position int64
}

func (m match) String() string {
	return fmt.Sprintf("%d %s key=%q value=%q txn=%s", m.Offset, m.Status, m.Key, m.Value, m.Txn)
}

// problem is a problem line.
type problem struct {
	Offset       int64  `json:"offset"`
	Status       string `json:"status"`
	SupersededBy *int64 `json:"supersededBy"`
	Written      int64  `json:"written"`
	Count        int64  `json:"count"`
	Segment      string `json:"segment"`
	Position     int64  `json:"position"`
	Message      string `json:"message"`
}

func genDir(t testing.TB, o gen.Options) string {
	t.Helper()
	o.Out = t.TempDir()
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0].Dir
}

func partition(t testing.TB, dir string) *layout.Partition {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runJobs runs jobs with JSON output, keys and values in base64, and parses
// what it wrote.
func runJobs(t *testing.T, jobs []Job, o Options) ([]match, []problem, []*Result) {
	t.Helper()
	o.Format = Format{JSON: true, KeyDecoder: textdec.Base64, ValueDecoder: textdec.Base64}
	if o.KeyMapMemory == 0 {
		o.KeyMapMemory = 64 << 20
	}
	if o.Workers == 0 {
		o.Workers = 2
	}
	if o.Range.FromTime == 0 {
		o.Range = fetch.DefaultOptions()
	}
	var out bytes.Buffer
	var results []*Result
	if err := Run(&out, jobs, o, func(r *Result) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Partition.Path, r.Err)
		}
	}
	var ms []match
	var ps []problem
	for line := range strings.Lines(out.String()) {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		switch head.Type {
		case "match":
			var raw struct {
				Offset      int64
				Status      string
				Key, Value  *string
				Transaction string
				Segment     string
				Position    int64
			}
			if err := json.Unmarshal([]byte(line), &raw); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, match{Offset: raw.Offset, Status: raw.Status, Key: unb64(t, raw.Key), Value: unb64(t, raw.Value),
				Txn: raw.Transaction, Segment: raw.Segment, Position: raw.Position})
		case "problem":
			var p problem
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		default:
			t.Fatalf("line of type %q: %s", head.Type, line)
		}
	}
	return ms, ps, results
}

func fetchRange(from, to int64) fetch.Options {
	o := fetch.DefaultOptions()
	o.FromOffset, o.ToOffset = from, to
	return o
}

func unb64(t *testing.T, s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{}, b...)
}

// refRecord is a record as kmsg decodes it, with what the reference needs
// of its batch.
type refRecord struct {
	kafkatest.Record
	headers map[string][]byte
	label   string // kafkatest.Transactions: "", committed, aborted, ongoing
	written int64  // the batch's largest timestamp
	segment string
	pos     int64
}

// refLog decodes a partition with kafkatest, independently of logfmt.
func refLog(t *testing.T, dir string) []refRecord {
	t.Helper()
	var batches []kafkatest.Batch
	var segs []string
	for _, s := range partition(t, dir).Segments {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		entries, pos := kafkatest.Entries(data)
		for i, e := range entries {
			b, err := kafkatest.Decode(e)
			if err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			b.Pos = pos[i]
			batches = append(batches, b)
			segs = append(segs, filepath.Base(s.Log))
		}
	}
	labels, _ := kafkatest.Transactions(batches)
	var out []refRecord
	for i, b := range batches {
		if b.Control {
			continue
		}
		written := int64(-1)
		for _, r := range b.Records {
			written = max(written, r.Timestamp)
		}
		for _, r := range b.Records {
			rr := refRecord{Record: r, label: labels[i], written: written, segment: segs[i], pos: b.Pos}
			if len(r.Headers) > 0 {
				rr.headers = map[string][]byte{}
				for _, h := range r.Headers {
					if _, dup := rr.headers[h.Key]; !dup {
						rr.headers[h.Key] = h.Value
					}
				}
			}
			out = append(out, rr)
		}
	}
	return out
}

// isVersion tells whether a record counts as a version of its key.
func (r *refRecord) isVersion() bool {
	return r.Key != nil && (r.label == "" || r.label == "committed")
}

// refStatuses are the statuses of every record, decided by looking at the
// whole log at once.
func refStatuses(log []refRecord) []string {
	newest := map[string]int{}
	for i := range log {
		if log[i].isVersion() {
			newest[string(log[i].Key)] = i
		}
	}
	st := make([]string, len(log))
	for i := range log {
		r := &log[i]
		switch {
		case r.label == "aborted" || r.label == "ongoing":
			st[i] = r.label
		case r.Key == nil:
			st[i] = "latest"
		default:
			n := newest[string(r.Key)]
			tomb := log[n].Value == nil
			switch {
			case n == i && tomb:
				st[i] = "tombstone"
			case n == i:
				st[i] = "latest"
			case tomb:
				st[i] = "deleted"
			default:
				st[i] = "superseded"
			}
		}
	}
	return st
}

// refMatches are the matches the reference expects.
func refMatches(log []refRecord, st []string, pred func(r *refRecord) bool) []match {
	var out []match
	for i := range log {
		if r := &log[i]; pred(r) {
			out = append(out, match{Offset: r.Offset, Status: st[i], Key: r.Key, Value: r.Value, Txn: r.label,
				Segment: r.segment, Position: r.pos})
		}
	}
	return out
}

func sameMatches(t *testing.T, what string, got, want []match) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d matches, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.String() != w.String() || (g.Key == nil) != (w.Key == nil) || (g.Value == nil) != (w.Value == nil) ||
			g.Segment != w.Segment || g.Position != w.Position {
			t.Fatalf("%s: match %d:\n got %v in %s at %d\nwant %v in %s at %d", what, i, g, g.Segment, g.Position, w, w.Segment, w.Position)
		}
	}
}

// specCase is a matcher and the reference's reading of it.
type specCase struct {
	name string
	spec Spec
	pred func(r *refRecord) bool
}

var amountRE = regexp.MustCompile(`"amount":4\d\d\.`)

func specCases() []specCase {
	key := func(k string) func(r *refRecord) bool {
		return func(r *refRecord) bool { return string(r.Key) == k }
	}
	return []specCase{
		{"key", Spec{Keys: []string{"key-000007"}}, key("key-000007")},
		{"key-hex-and-regex", Spec{KeysHex: []string{hex.EncodeToString([]byte("key-000020"))}, KeyRegexps: []string{`^key-00001[0-3]$`}},
			func(r *refRecord) bool {
				return string(r.Key) == "key-000020" || r.Key != nil && regexp.MustCompile(`^key-00001[0-3]$`).Match(r.Key)
			}},
		{"value-contains", Spec{ValueContains: []string{"refund"}}, func(r *refRecord) bool { return bytes.Contains(r.Value, []byte("refund")) }},
		{"key-and-value-regex", Spec{KeyRegexps: []string{"key-0000[0-2]"}, ValueRegexps: []string{amountRE.String()}},
			func(r *refRecord) bool {
				return r.Key != nil && regexp.MustCompile("key-0000[0-2]").Match(r.Key) && r.Value != nil && amountRE.Match(r.Value)
			}},
		{"header", Spec{Headers: []string{"source=gen", "none"}}, func(r *refRecord) bool {
			v, ok := r.headers["source"]
			_, none := r.headers["none"]
			return ok && string(v) == "gen" || none
		}},
		{"header-and-key", Spec{Headers: []string{"trace-id"}, KeyRegexps: []string{"7$"}}, func(r *refRecord) bool {
			_, ok := r.headers["trace-id"]
			return ok && bytes.HasSuffix(r.Key, []byte("7"))
		}},
	}
}

// TestAgainstKmsg: on every message format and codec, with transactions
// that commit and abort, tombstones and keyless records, every matcher
// finds what an independent decoder (franz-go kmsg, through kafkatest)
// finds, with the statuses a look at the whole log gives.
func TestAgainstKmsg(t *testing.T) {
	seen := map[string]int{}
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			for _, keys := range []int{0, 40} {
				o := gen.Options{Topics: []string{"t"}, Records: 700, Keys: keys, Magic: magic, Compression: c, BatchRecords: 7,
					SegmentBytes: 12 << 10, TombstoneRatio: 0.15, Seed: int64(magic)*100 + int64(c)}
				if magic == 2 {
					o.TransactionalRatio, o.AbortRatio = 0.4, 0.4
				}
				dir := genDir(t, o)
				log := refLog(t, dir)
				st := refStatuses(log)
				for _, sc := range specCases() {
					t.Run(fmt.Sprintf("v%d-%s-keys%d-%s", magic, c, keys, sc.name), func(t *testing.T) {
						m, err := NewMatcher(sc.spec)
						if err != nil {
							t.Fatal(err)
						}
						want := refMatches(log, st, sc.pred)
						workers := []int{2}
						if sc.name == "key" || sc.name == "value-contains" {
							workers = []int{1, 3}
						}
						for _, workers := range workers {
							got, _, res := runJobs(t, []Job{{Partition: partition(t, dir)}}, Options{Match: m, Workers: workers})
							sameMatches(t, fmt.Sprintf("workers %d", workers), got, want)
							var counts Counts
							for _, w := range want {
								counts[slices.Index(statusNames[:], w.Status)]++
							}
							if res[0].Counts != counts {
								t.Errorf("counts %v, want %v", res[0].Counts, counts)
							}
						}
						for _, w := range want {
							seen[w.Status]++
						}
					})
				}
			}
		}
	}
	t.Logf("statuses met: %v", seen)
	// The reference is only worth its name if it met every status.
	for _, s := range []string{"latest", "superseded", "tombstone", "deleted", "aborted"} {
		if seen[s] == 0 {
			t.Errorf("no %s match in any case: %v", s, seen)
		}
	}
}

// TestRangeAndSegments: offset bounds and named segments limit the
// matches, not the statuses, which still come from the whole log.
func TestRangeAndSegments(t *testing.T) {
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 900, Keys: 30, Magic: 2, Compression: codec.LZ4, BatchRecords: 5,
		SegmentBytes: 10 << 10, TombstoneRatio: 0.1, TransactionalRatio: 0.3, AbortRatio: 0.5, Seed: 9})
	p := partition(t, dir)
	log := refLog(t, dir)
	st := refStatuses(log)
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"[13579]$"}})
	odd := func(r *refRecord) bool {
		return r.Key != nil && strings.ContainsAny(string(r.Key[len(r.Key)-1:]), "13579")
	}

	got, _, _ := runJobs(t, []Job{{Partition: p}}, Options{Match: m, Range: fetchRange(210, 655)})
	sameMatches(t, "offsets 210-655", got, refMatches(log, st, func(r *refRecord) bool {
		return odd(r) && r.Offset >= 210 && r.Offset <= 655
	}))

	if len(p.Segments) < 4 {
		t.Fatalf("want several segments, got %d", len(p.Segments))
	}
	named := []int64{p.Segments[1].Base, p.Segments[3].Base}
	inNamed := map[string]bool{filepath.Base(p.Segments[1].Log): true, filepath.Base(p.Segments[3].Log): true}
	got, _, _ = runJobs(t, []Job{{Partition: p, Segments: named}}, Options{Match: m})
	sameMatches(t, "segments 1 and 3", got, refMatches(log, st, func(r *refRecord) bool { return odd(r) && inNamed[r.segment] }))
	// Without key matchers, the find pass reads the named segments only.
	vm, _ := NewMatcher(Spec{ValueContains: []string{"login"}})
	got, _, _ = runJobs(t, []Job{{Partition: p, Segments: named}}, Options{Match: vm})
	sameMatches(t, "segments 1 and 3, by value", got, refMatches(log, st, func(r *refRecord) bool {
		return bytes.Contains(r.Value, []byte("login")) && inNamed[r.segment]
	}))
}

// logBatch is a v2 batch for writeLog: keyed records with a producer and
// a transaction flag, or a marker.
type logBatch struct {
	pid    int64
	txn    bool
	isCtl  bool
	marker logfmt.ControlType // with isCtl
	keys   []string           // "k=v", or "k=" for a tombstone
	ts     int64
}

// writeLog writes a partition, one segment per slice of batches.
func writeLog(t *testing.T, segments ...[]logBatch) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "keys-0")
	var segs [][]testutil.Batch
	for _, seg := range segments {
		var bs []testutil.Batch
		for _, b := range seg {
			o := logfmt.DefaultBatchOptions(0)
			o.ProducerID, o.ProducerEpoch, o.BaseSequence = b.pid, 0, 0
			o.Transactional, o.Control = b.txn, b.isCtl
			var recs []logfmt.Record
			if b.isCtl {
				recs = []logfmt.Record{{Timestamp: b.ts, Key: logfmt.ControlKey(b.marker),
					Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{CoordinatorEpoch: 1})}}
			}
			for _, kv := range b.keys {
				k, v, _ := strings.Cut(kv, "=")
				r := logfmt.Record{Timestamp: b.ts, Key: []byte(k)}
				if v != "" {
					r.Value = []byte(v)
				}
				recs = append(recs, r)
			}
			bs = append(bs, testutil.Batch{Options: o, Records: recs})
		}
		segs = append(segs, bs)
	}
	testutil.WriteLog(t, dir, segs...)
	return dir
}

// TestTransactionStatuses: an aborted record supersedes nothing and is
// reported aborted; a record of a transaction with no marker is ongoing
// and supersedes nothing yet; control records never match.
func TestTransactionStatuses(t *testing.T) {
	const idem, a, b = 5, 6, 7
	dir := writeLog(t,
		[]logBatch{{pid: idem, keys: []string{"x=1", "y=1"}, ts: 1000}, {pid: a, txn: true, keys: []string{"x=2"}, ts: 1001}},
		[]logBatch{{pid: a, isCtl: true, marker: logfmt.ControlAbort, ts: 1002}, {pid: idem, keys: []string{"y="}, ts: 1003},
			{pid: b, txn: true, keys: []string{"y=3", "x=3"}, ts: 1004}})
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"."}})
	got, _, _ := runJobs(t, []Job{{Partition: partition(t, dir)}}, Options{Match: m})
	var lines []string
	for _, g := range got {
		lines = append(lines, fmt.Sprintf("%d %s %s", g.Offset, g.Key, g.Status))
	}
	want := []string{"0 x latest", "1 y deleted", "2 x aborted", "4 y tombstone", "5 y ongoing", "6 x ongoing"}
	if !slices.Equal(lines, want) {
		t.Errorf("got %q\nwant %q", lines, want)
	}
}

// TestPartitionsInOrder: partitions searched in parallel write their
// lines one partition after another, in the order given, whatever the
// number of workers.
func TestPartitionsInOrder(t *testing.T) {
	var jobs []Job
	for i := range 3 {
		jobs = append(jobs, Job{Partition: partition(t, genDir(t, gen.Options{Topics: []string{"t"}, Records: 3000, Keys: 50,
			Magic: 2, SegmentBytes: 64 << 10, Seed: int64(i)}))})
	}
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"[05]$"}})
	var want []match
	for _, j := range jobs {
		got, _, _ := runJobs(t, []Job{j}, Options{Match: m, Workers: 1})
		want = append(want, got...)
	}
	for _, w := range []int{1, 2, 5} {
		got, _, _ := runJobs(t, jobs, Options{Match: m, Workers: w})
		sameMatches(t, fmt.Sprintf("workers %d", w), got, want)
	}
}

// blockedWriter holds every write until it is released.
type blockedWriter struct{ release chan struct{} }

func (w *blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}

// TestStalledWriter: when whatever reads the output stops reading (a pager
// left open), the match pass stops a few chunks of output later instead
// of queueing the lines of the whole log.
func TestStalledWriter(t *testing.T) {
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 100_000, Keys: 1000, Magic: 2, SegmentBytes: 1 << 30, Seed: 5})
	p := partition(t, dir)
	m, _ := NewMatcher(Spec{ValueContains: []string{"{"}}) // every record
	var mu sync.Mutex
	var done, todo, passes int64
	o := Options{Match: m, Range: fetch.DefaultOptions(), Workers: 2, KeyMapMemory: 64 << 20, Format: Format{JSON: true},
		Progress: func(d, n int64) {
			mu.Lock()
			defer mu.Unlock()
			done, todo = done+d, todo+n
			if n > 0 {
				passes++
			}
		}}
	w := &blockedWriter{release: make(chan struct{})}
	finished := make(chan error)
	go func() { finished <- Run(w, []Job{{Partition: p}}, o, func(*Result) {}) }()
	// Wait until the match pass (the third) has stopped moving.
	var last, size int64
	for stable := 0; stable < 10; {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur, n, size3 := done, passes, todo
		mu.Unlock()
		if n < 3 || cur != last {
			stable, last = 0, cur
			continue
		}
		size = size3 / 3
		stable++
	}
	// What the match pass handed over waits in the output: the chunk being
	// written, two queued, one being handed over, each more output than
	// the log it comes from.
	if inMatch := last - 2*size; inMatch > 4*chunkSize || size < 8*chunkSize {
		t.Errorf("with the writer stalled the match pass read %d bytes of %d", inMatch, size)
	}
	close(w.release)
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
}

// TestProgressEnds: every pass announces the bytes it reads and reads them,
// with the key pass run during the first pass too, on a segment whose
// zeroed tail no pass reads.
func TestProgressEnds(t *testing.T) {
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 3000, Keys: 100, Magic: 2, SegmentBytes: 64 << 10, Seed: 8,
		TransactionalRatio: 0.5, AbortRatio: 0.2})
	p := partition(t, dir)
	testutil.AppendBytes(t, p.Segments[0].Log, make([]byte, 10000))
	// The last: a key pass that must run again after the first pass.
	for i, spec := range []Spec{{Keys: []string{"key-000042"}}, {ValueContains: []string{"7"}}, {Keys: []string{"key-000042"}}} {
		if i == 2 {
			defer setMaxTxnKeys(0)()
		}
		if done, todo, err := progressOf(t, p, spec); err != nil || done != todo || todo == 0 {
			t.Errorf("%+v: %d bytes read of %d announced, %v", spec, done, todo, err)
		}
	}
}

// progressOf searches p for spec on two workers, and returns the bytes its
// progress said it read, those it announced, and how the search ended.
func progressOf(t *testing.T, p *layout.Partition, spec Spec) (done, todo int64, end error) {
	t.Helper()
	var mu sync.Mutex
	o := Options{Match: keyMatcher(t, spec), Range: fetch.DefaultOptions(), Workers: 2, KeyMapMemory: 16 << 20,
		Progress: func(d, n int64) {
			mu.Lock()
			done, todo = done+d, todo+n
			mu.Unlock()
		}}
	if err := Run(io.Discard, []Job{{Partition: p}}, o, func(r *Result) { end = r.Err }); err != nil {
		t.Fatal(err)
	}
	return done, todo, end
}

// TestSeekKeys: a few exact keys are looked for from their byte rarest in
// the data on, two bytes at least; other matchers read every batch.
func TestSeekKeys(t *testing.T) {
	data := func() []byte { return []byte(strings.Repeat("key-000042 key-000042 key-000017 ", 50)) }
	cases := []struct {
		spec Spec
		want []string
	}{
		{Spec{Keys: []string{"key-004272"}}, []string{"72"}},
		{Spec{Keys: []string{"key-000000"}}, []string{"key-000000"}},
		{Spec{Keys: []string{"x"}, KeysHex: []string{"00"}}, []string{"x", "\x00"}},
		{Spec{Keys: []string{""}}, []string{""}},
		{Spec{Keys: []string{"a", "b", "c"}}, nil},
		{Spec{Keys: []string{"a"}, KeyRegexps: []string{"b"}}, nil},
		{Spec{ValueContains: []string{"a"}}, nil},
	}
	for _, c := range cases {
		m, err := NewMatcher(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range m.seekKeys(data) {
			got = append(got, string(k))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: looks for %q, want %q", c.spec, got, c.want)
		}
	}
}
