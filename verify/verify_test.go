package verify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/reindex"
)

// samples is the shared real broker data.
var samples = kafkasamples.Dir()

// result is what a run over some paths found.
type result struct {
	problems, infos int
	findings        []Finding
	failures        []error
	reports         []*Report
}

func (r result) String() string {
	var b strings.Builder
	for _, f := range r.findings {
		b.WriteString(f.String() + "\n")
	}
	for _, err := range r.failures {
		b.WriteString("failure: " + err.Error() + "\n")
	}
	return b.String()
}

// problemsAbout returns the problems about file.
func (r result) problemsAbout(file string) []Finding {
	var out []Finding
	for _, f := range r.findings {
		if f.Severity == Problem && f.File == file {
			out = append(out, f)
		}
	}
	return out
}

func run(t testing.TB, o Options, paths ...string) result {
	t.Helper()
	p, _ := plan(t, paths...)
	if o.Workers == 0 {
		o.Workers = 2
	}
	var r result
	err := p.Run(o, func(rep *Report) error {
		r.reports = append(r.reports, rep)
		r.problems += rep.Problems
		r.infos += rep.Infos
		r.findings = append(r.findings, rep.Findings...)
		checkCodes(t, rep.Findings)
		if rep.Err != nil {
			r.failures = append(r.failures, rep.Err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

// fixture is a generated log directory with one partition.
type fixture struct {
	dir  string // the log directory
	part string // the partition directory
}

func (f fixture) file(name string) string { return filepath.Join(f.part, name) }

func generate(t testing.TB, o gen.Options) fixture {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	if len(o.Topics) == 0 {
		o.Topics = []string{"t"}
	}
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	// gen files an aborted transaction under the segment its data is in
	// when the marker starts the next segment; Kafka files it under the
	// marker's. reindex rebuilds the transaction indexes as Kafka does.
	if o.AbortRatio > 0 {
		for _, p := range parts {
			if _, err := reindex.Partition(p.Dir, reindex.Options{Txn: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return fixture{dir: o.Out, part: parts[0].Dir}
}

// small generates a partition of a few segments with every file gen writes.
func small(t testing.TB, magic int8, c codec.Type) fixture {
	t.Helper()
	o := gen.Options{Records: 120, Keys: 20, ValueBytes: 40, BatchRecords: 5, Magic: magic, Compression: c, SegmentBytes: 2048, Seed: 11}
	if magic == 2 {
		o.TransactionalRatio, o.AbortRatio = 0.4, 0.5
	}
	return generate(t, o)
}

// formats are the message formats and codecs gen writes.
var formats = []struct {
	name  string
	magic int8
	codec codec.Type
}{
	{"v0", 0, codec.None}, {"v0-gzip", 0, codec.Gzip}, {"v0-snappy", 0, codec.Snappy},
	{"v1", 1, codec.None}, {"v1-lz4", 1, codec.LZ4},
	{"v2", 2, codec.None}, {"v2-lz4", 2, codec.LZ4}, {"v2-zstd", 2, codec.Zstd},
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGeneratedIsClean(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			fx := small(t, f.magic, f.codec)
			for _, deep := range []bool{false, true} {
				r := run(t, Options{Deep: deep, StrictIndexes: true}, fx.dir)
				if r.problems != 0 || len(r.failures) != 0 || r.infos != 0 {
					t.Fatalf("deep=%v: %d problems, %d infos, want none:\n%s", deep, r.problems, r.infos, r)
				}
			}
		})
	}
}

func TestSamplesAreClean(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(samples, "logdirs", "*"))
	if len(dirs) == 0 {
		kafkasamples.Skip(t, errors.New("no kafka-samples at "+samples))
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(d), func(t *testing.T) {
			for _, deep := range []bool{false, true} {
				r := run(t, Options{Deep: deep}, d)
				want := 0
				if gone := logGone[filepath.Base(d)]; gone != "" {
					want = len(r.problemsAbout(filepath.Join(d, gone)))
				}
				if r.problems != want || len(r.failures) != 0 {
					t.Fatalf("deep=%v: %d problems:\n%s", deep, r.problems, r)
				}
			}
		})
	}
}

// logGone names the partition of a sample log directory whose .log the
// sample leaves out (provenance.json, not_included).
var logGone = map[string]string{"itumelengmogase_kraft-ksqldb-txn": "__cluster_metadata-0"}

// TestSamplesLogGone: a partition whose every .log is gone while other
// files say it held records. A broker would start it empty, so the records
// are lost; with only some of its files present that is a problem.
func TestSamplesLogGone(t *testing.T) {
	kraft := filepath.Join(samples, "logdirs", "itumelengmogase_kraft-ksqldb-txn")
	zk := filepath.Join(samples, "logdirs", "xpxwo100_kafka-0.10.1.0-magic1")
	if _, err := os.Stat(zk); err != nil {
		kafkasamples.Skip(t, err)
	}
	dir := filepath.Join(t.TempDir(), "logs")
	testutil.CopyTree(t, zk, dir)
	if err := os.Remove(filepath.Join(dir, "TEST-TOPIC-0", "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, part, want string }{
		// The metadata log restarts at its latest KRaft snapshot, 60500;
		// a producer snapshot says it reached 66046.
		{kraft, filepath.Join(kraft, "__cluster_metadata-0"), "yet producer snapshot 00000000000000066046.snapshot was taken at offset 66046: the records at offsets 60500 to 66045 are gone"},
		// replication-offset-checkpoint: "TEST-TOPIC 0 21211".
		{dir, filepath.Join(dir, "TEST-TOPIC-0"), "yet replication-offset-checkpoint gives it a high watermark of 21211: the records at offsets 0 to 21210 are gone"},
		{filepath.Join(dir, "TEST-TOPIC-0"), filepath.Join(dir, "TEST-TOPIC-0"), "high watermark of 21211"},
	} {
		r := run(t, Options{}, c.path)
		got := r.problemsAbout(c.part)
		if len(got) != 1 || !strings.Contains(got[0].Msg, c.want) || r.problems != 1 {
			t.Errorf("%s: want one problem about %s saying %q, got:\n%s", c.path, c.part, c.want, r)
		}
	}
}

// TestSamplesMissingIndexes checks that index files a broker rebuilds are
// information when absent, and that live-broker indexes pass unless strict.
func TestSamplesMissingIndexes(t *testing.T) {
	dir := filepath.Join(samples, "logdirs", "ldi-poc_kafka-3.7.0-kraft", "TestTopicPatient-0")
	live := filepath.Join(samples, "logdirs", "volodymyrzee_kafka-2.x-zk", "__consumer_offsets-12")
	if _, err := os.Stat(dir); err != nil {
		kafkasamples.Skip(t, err)
	}
	r := run(t, Options{}, dir)
	index := filepath.Join(dir, "00000000000000000000.index")
	found := false
	for _, f := range r.findings {
		found = found || f.File == index && f.Severity == Info
	}
	if r.problems != 0 || !found {
		t.Errorf("want no problems and an info about %s:\n%s", index, r)
	}
	if r := run(t, Options{}, live); r.problems != 0 || r.infos == 0 {
		t.Errorf("live broker's time index: want infos and no problems:\n%s", r)
	}
	if r := run(t, Options{StrictIndexes: true}, live); r.problems == 0 {
		t.Errorf("live broker's time index under StrictIndexes: want problems")
	}
}

func TestShippedSampleIsClean(t *testing.T) {
	const dir = "../testdata/kafka-logs"
	for _, deep := range []bool{false, true} {
		r := run(t, Options{Deep: deep, StrictIndexes: true}, dir)
		if r.problems != 0 || r.infos != 0 || len(r.failures) != 0 {
			t.Fatalf("deep=%v: want nothing to report:\n%s", deep, r)
		}
		if len(r.reports) != 9 || r.reports[8].Kind != RootUnit {
			t.Errorf("want 8 partitions (the metadata log too) then the log directory's root, got %d reports", len(r.reports))
		}
	}
}

func TestRecordSets(t *testing.T) {
	sets, _ := filepath.Glob(filepath.Join(samples, "record-sets", "*", "*.records"))
	if len(sets) == 0 {
		kafkasamples.Skip(t, errors.New("no kafka-samples at "+samples))
	}
	for _, path := range sets {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := run(t, Options{Deep: true}, path)
			if !strings.Contains(path, "invalid_crc") {
				if r.problems != 0 || len(r.failures) != 0 {
					t.Fatalf("want clean:\n%s", r)
				}
				return
			}
			if r.problems != 1 || r.findings[0].Pos != 0 || r.findings[0].File != path || !strings.Contains(r.findings[0].Msg, "checksum mismatch") {
				t.Fatalf("want one checksum problem at byte 0:\n%s", r)
			}
		})
	}
}

// TestPreallocatedIndexes checks that the zero-filled tails of the index
// files of an active segment, as a running or crashed broker leaves them,
// are information, and problems only when indexes must match a rebuild.
func TestPreallocatedIndexes(t *testing.T) {
	fx := indexed(t)
	logs := segmentLogs(t, fx)
	active := strings.TrimSuffix(logs[len(logs)-1], ".log")
	for _, ext := range []string{".index", ".timeindex"} {
		edit(t, active+ext, func(b []byte) []byte { return append(b, make([]byte, 8*12*100)...) })
	}
	r := run(t, Options{}, fx.dir)
	if r.problems != 0 || r.infos < 2 {
		t.Errorf("want two infos and no problems:\n%s", r)
	}
	if r := run(t, Options{StrictIndexes: true}, fx.dir); len(r.problemsAbout(active+".index")) == 0 || len(r.problemsAbout(active+".timeindex")) == 0 {
		t.Errorf("StrictIndexes: want problems about both files:\n%s", r)
	}
}

// TestNamesABrokerCannotLoad: a segment-like file whose name is no 64-bit
// offset, and a directory named like a segment file, are problems: a broker
// fails on each (NumberFormatException, IOException), where before verify
// said nothing or that a broker ignores them.
func TestNamesABrokerCannotLoad(t *testing.T) {
	fx := small(t, 2, codec.None)
	first := mustRead(t, fx.file("00000000000000000000.log"))
	mustWrite(t, fx.file("99999999999999999999.log"), first)
	mustWrite(t, fx.file("notes.index"), nil)
	for _, name := range []string{"00000000000000000500.index", "00000000000000000000.timeindex.old"} {
		if err := os.Mkdir(fx.file(name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(fx.file("00000000000000000000.txnindex"))
	if err := os.Mkdir(fx.file("00000000000000000000.txnindex"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, Options{}, fx.dir)
	for name, want := range map[string]string{
		"99999999999999999999.log":      `Long.parseLong("99999999999999999999") throws NumberFormatException`,
		"notes.index":                   `Long.parseLong("notes")`,
		"00000000000000000500.index":    "a broker skips it when loading, but fails",
		"00000000000000000000.txnindex": "a broker opens it as that file when it loads the segment",
	} {
		if ps := r.problemsAbout(fx.file(name)); len(ps) != 1 || !strings.Contains(ps[0].Msg, want) {
			t.Errorf("%s: %v, want one problem saying %q\n%s", name, ps, want, r)
		}
	}
	if r.problems != 4 {
		t.Errorf("%d problems, want 4 (a directory named otherwise is ignored):\n%s", r.problems, r)
	}
}
