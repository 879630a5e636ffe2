package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

func TestFindOffset(t *testing.T) {
	code, out, errOut := reindexCLI(t, "find", "--offset", "1000", reindexSample+"/orders-0")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"target     offset 1000\n",
		"segment    ../testdata/kafka-logs/orders-0/00000000000000000712.log (base offset 712)\n",
		"index      entry: offset ",
		"scan       from byte ",
		"batch      at byte ",
		"answer     offset 1000, timestamp ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "fallback") {
		t.Errorf("fell back with good indexes:\n%s", out)
	}
}

func TestFindTimestampJSON(t *testing.T) {
	for _, ts := range []string{"2024-01-01T00:10:00Z", "1704067800000"} {
		code, out, errOut := reindexCLI(t, "--format", "json", "find", "--timestamp", ts, reindexSample+"/payments.txn-0")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		var m struct {
			Type, File, By string
			Found          bool
			Target         int64
			Offset         *int64
			Timestamp      *int64
			Batch          *struct {
				BaseOffset, LastOffset, MaxTimestamp int64
			}
			TimeIndexEntry *struct{ Offset, Timestamp int64 }
			Fallbacks      []string
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if m.Type != "find" || m.By != "timestamp" || !m.Found || m.Target != 1704067800000 || m.Offset == nil || *m.Timestamp < m.Target ||
			m.Batch == nil || m.Batch.MaxTimestamp < m.Target || *m.Offset < m.Batch.BaseOffset || *m.Offset > m.Batch.LastOffset ||
			!strings.HasSuffix(m.File, ".log") || m.TimeIndexEntry == nil || m.TimeIndexEntry.Timestamp > m.Target || m.Fallbacks == nil {
			t.Errorf("%s", out)
		}
	}
}

func TestFindFallsBack(t *testing.T) {
	dir := reindexCopy(t, "clicks-v1-0")
	part := filepath.Join(dir, "clicks-v1-0")
	if err := os.Remove(filepath.Join(part, layout.SegmentName(0, layout.IndexExt))); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := reindexCLI(t, "find", "--offset", "300", part)
	if code != 0 || !strings.Contains(out, "fallback   ") || !strings.Contains(out, "no .index; scanning from byte 0") ||
		!strings.Contains(out, "answer     offset 300,") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestFindNotFound(t *testing.T) {
	code, out, _ := reindexCLI(t, "find", "--offset", "999999", reindexSample+"/legacy.events-v0-0")
	if code != 0 || !strings.Contains(out, "answer     none: offset 999999 is at or past the log end offset 600") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = reindexCLI(t, "--format", "json", "find", "--timestamp", "0", reindexSample+"/legacy.events-v0-0")
	if code != 0 || !strings.Contains(out, `"found":false`) || !strings.Contains(out, "no record has timestamp 0 or later") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestFindUsage(t *testing.T) {
	for _, args := range [][]string{
		{"find", reindexSample + "/orders-0"},
		{"find", "--offset", "1", "--timestamp", "1", reindexSample + "/orders-0"},
		{"find", "--offset", "-1", reindexSample + "/orders-0"},
		{"find", "--offset", "x", reindexSample + "/orders-0"},
		{"find", "--timestamp", "yesterday", reindexSample + "/orders-0"},
		{"find", "--offset", "1", reindexSample},
		{"find", "--offset", "1", reindexSample + "/orders-0/00000000000000000000.log"},
		{"find", "--offset", "1"},
		{"find", "--offset", "1", reindexSample + "/nope-0"},
	} {
		if code, out, errOut := reindexCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errOut)
		}
	}
}

// A damaged batch is reported the same whether find looks up by offset or by
// timestamp: before, --timestamp lost the error to a shadowed err and exited 0.
func TestFindDamagedSameAnswer(t *testing.T) {
	dir := t.TempDir()
	damagedFirstBatch(t, dir) // both lookups start at byte 0
	part := filepath.Join(dir, "orders-0")
	for _, args := range [][]string{{"--offset", "0"}, {"--timestamp", "0"}} {
		code, out, errOut := reindexCLI(t, append(append([]string{"find"}, args...), part)...)
		if code == 0 || !strings.Contains(errOut, "00000000000000000000.log") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// damagedFirstBatch copies the sample's orders-0 into dir/orders-0 with the
// first batch's length field damaged.
func damagedFirstBatch(t *testing.T, dir string) {
	part := filepath.Join(dir, "orders-0")
	testutil.CopyTree(t, filepath.Join(sample, "orders-0"), part)
	testutil.FlipByte(t, filepath.Join(part, "00000000000000000000.log"), 8)
}

func TestFindGolden(t *testing.T) {
	runGolden(t, "find", []goldenCase{
		{name: "damaged-offset", args: []string{"find", "--offset", "0", "$DIR/orders-0"}, setup: damagedFirstBatch},
		{name: "damaged-timestamp", args: []string{"find", "--timestamp", "0", "$DIR/orders-0"}, setup: damagedFirstBatch},
		{name: "offset", args: []string{"find", "--offset", "1000", sample + "/orders-0"}},
		{name: "offset-record", args: []string{"find", "--offset", "100", "--print-data-log", sample + "/orders-0"}},
		{name: "timestamp-record-headers", args: []string{"find", "--timestamp", "2024-01-01T00:00:06Z", "--print-data-log", sample + "/user-profiles-0"}},
		{name: "record-decoders", args: []string{"find", "--offset", "5", "--key-decoder", "none", "--value-decoder", "base64", sample + "/user-profiles-0"}},
		{name: "tombstone", args: []string{"find", "--offset", "7", "--print-data-log", sample + "/user-profiles-0"}},
		{name: "null-key", args: []string{"find", "--offset", "0", "--print-data-log", sample + "/clicks-v1-0"}},
		{name: "legacy-record", args: []string{"find", "--offset", "7", "--print-data-log", sample + "/legacy.events-v0-0"}},
		{name: "not-found", args: []string{"find", "--offset", "999999", "--print-data-log", sample + "/orders-0"}},
		{name: "json-offset", args: []string{"--format=json", "find", "--offset", "1000", sample + "/orders-0"}},
		{name: "json-record", args: []string{"--format=json", "find", "--timestamp", "2024-01-01T00:00:06Z", "--print-data-log", sample + "/user-profiles-0"}},
		{name: "json-record-hex", args: []string{"--format=json", "find", "--offset", "1190", "--value-decoder", "hex", sample + "/payments.txn-0"}},
	})
}
