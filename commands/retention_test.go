package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

// retentionLogDir generates a KRaft log directory: orders (2 partitions,
// v2), legacy (magic 0) and __consumer_offsets (compacted, as Kafka creates
// it), records from 2024-01-01 one second apart.
func retentionLogDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, o := range []gen.Options{
		{Topics: []string{"orders"}, Partitions: 2, Magic: 2, Records: 600, Keys: 30, SegmentBytes: 16 << 10, Seed: 1},
		{Topics: []string{"legacy"}, Magic: 0, Records: 300, Keys: 30, SegmentBytes: 8 << 10, Seed: 2},
		{Topics: []string{"__consumer_offsets"}, Magic: 2, Records: 300, Keys: 5, SegmentBytes: 8 << 10, Seed: 3,
			TopicConfigs: map[string]map[string]string{"__consumer_offsets": {"cleanup.policy": "compact", "segment.bytes": "104857600"}}},
	} {
		o.Out, o.KRaft = dir, true
		if _, err := gen.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runRetentionCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(append([]string{"logtool"}, args...), nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

// treeHash hashes names, modes, times and contents of everything under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".lock" {
			return nil // an empty file a writer leaves, as a broker does
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fmt.Fprintf(h, "%s %v %d\n", path, info.Mode(), info.ModTime().UnixNano())
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// At 00:08 with 5 minutes of retention, orders' first segments expire.
var retentionArgs = []string{"retention", "--now", "2024-01-01T00:08:00Z", "--retention-ms", "5m"}

func TestRetentionDryRunText(t *testing.T) {
	dir := retentionLogDir(t)
	before := treeHash(t, dir)
	code, out, errOut := runRetentionCmd(t, append(retentionArgs, "--dry-run", dir)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if after := treeHash(t, dir); after != before {
		t.Error("a dry run changed the log directory")
	}
	for _, want := range []string{"Dry run", "PARTITION", "orders-0", "orders-1", "legacy-0", "retention-ms", "(timeindex)",
		"BASE OFFSET", "LARGEST TIMESTAMP"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^orders-0 +0 +15\.4 KiB +retention-ms `).MatchString(out) {
		t.Errorf("no row for orders-0's first segment:\n%s", out)
	}
	// A compacted topic gets only the log start rule, as on a broker.
	if !regexp.MustCompile(`(?m)^__consumer_offsets-0 +0 +0 B `).MatchString(out) ||
		!strings.Contains(out, "__consumer_offsets-0: cleanup.policy=compact: only the log start offset rule applies") {
		t.Errorf("__consumer_offsets:\n%s", out)
	}
}

func TestRetentionJSON(t *testing.T) {
	dir := retentionLogDir(t)
	code, out, errOut := runRetentionCmd(t, append([]string{"--format", "json"}, append(retentionArgs, dir)...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	partitions := map[string]map[string]any{}
	segments := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if obj["type"] == nil || obj["file"] == nil {
			t.Errorf("object without type or file: %s", line)
		}
		switch obj["type"] {
		case "retention":
			for _, k := range []string{"partition", "segmentsDeleted", "bytesDeleted", "logStartOffset", "rule", "oldestRemainingTimestamp", "config", "reason", "skipped"} {
				if _, ok := obj[k]; !ok {
					t.Errorf("retention object without %q: %s", k, line)
				}
			}
			partitions[filepath.Base(obj["file"].(string))] = obj
		case "retention-segment":
			segments++
			// gen gives magic-0 segments the modification time of their
			// last message, which is what decides for them.
			want := "timeindex"
			if strings.Contains(obj["file"].(string), "legacy-0") {
				want = "mtime"
			}
			if obj["rule"] != "retention-ms" || obj["timestampSource"] != want {
				t.Errorf("segment %s: want retention-ms by %s", line, want)
			}
			if _, err := os.Stat(obj["file"].(string)); err == nil {
				t.Errorf("%s still exists", obj["file"])
			}
		default:
			t.Errorf("unexpected object %s", line)
		}
	}
	o0 := partitions["orders-0"]
	if o0 == nil || o0["segmentsDeleted"].(float64) == 0 || o0["rule"] != "retention-ms" || o0["partition"].(float64) != 0 || o0["topic"] != "orders" {
		t.Errorf("orders-0: %v", o0)
	}
	if l := partitions["legacy-0"]; l == nil || l["segmentsDeleted"].(float64) == 0 || l["rule"] != "retention-ms" || l["oldestRemainingTimestampSource"] != "mtime" {
		t.Errorf("legacy-0: %v", l)
	}
	cfg, _ := o0["config"].(map[string]any)
	if ms, _ := cfg["retention.ms"].(map[string]any); ms["value"] != "300000" || ms["source"] != "COMMAND_LINE" {
		t.Errorf("orders-0 config %v", cfg)
	}
	if p, _ := cfg["cleanup.policy"].(map[string]any); p["value"] != "delete" || p["source"] != "DEFAULT_CONFIG" {
		t.Errorf("orders-0 config %v", cfg)
	}
	if c := partitions["__consumer_offsets-0"]; c == nil || c["segmentsDeleted"].(float64) != 0 ||
		c["config"].(map[string]any)["cleanup.policy"].(map[string]any)["source"] != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("__consumer_offsets-0: %v", c)
	}
	if segments == 0 || len(partitions) != 4 {
		t.Errorf("%d segments, partitions %v", segments, partitions)
	}
	ls, err := os.ReadFile(filepath.Join(dir, layout.LogStartOffsetCheckpointFile))
	if err != nil || !bytes.Contains(ls, []byte("orders 0 ")) {
		t.Errorf("log-start-offset-checkpoint %q, %v", ls, err)
	}
}

// TestRetentionJSONRolledSegment: a path is in file only, so the segment
// rolled when every segment expired is named by its file name, as segment
// is everywhere in the JSON.
func TestRetentionJSONRolledSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, sample, dir)
	code, out, errOut := runArgs("--no-progress", "--format", "json", "retention", "--dry-run", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rolled := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj struct{ File, RolledSegment *string }
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if s := obj.RolledSegment; s != nil {
			rolled++
			if *s != filepath.Base(*s) || filepath.Dir(filepath.Join(*obj.File, *s)) != *obj.File {
				t.Errorf("rolledSegment %q is not a file name in %s", *s, *obj.File)
			}
		}
	}
	if rolled == 0 {
		t.Errorf("no partition rolled a segment:\n%s", out)
	}
}

// --topic chooses, each topic's policy decides, --cleanup-policy overrides
// it.
func TestRetentionTopicAndQuiet(t *testing.T) {
	dir := retentionLogDir(t)
	args := []string{"--quiet", "retention", "--topic", "__consumer_offsets|legacy", "--retention-ms", "0", "--now", "2030-01-01T00:00:00Z"}
	code, out, errOut := runRetentionCmd(t, append(args, dir)...)
	if code != ExitOK || out != "" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	rolled := func(name string) bool {
		p, err := layout.ReadPartition(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Segments) == 1 && p.Segments[0].Base > 0
	}
	if rolled("__consumer_offsets-0") || !rolled("legacy-0") || rolled("orders-0") {
		t.Errorf("rolled: __consumer_offsets-0 %v, legacy-0 %v, orders-0 %v; want only legacy-0",
			rolled("__consumer_offsets-0"), rolled("legacy-0"), rolled("orders-0"))
	}
	if code, _, errOut := runRetentionCmd(t, append(args, "--cleanup-policy", "delete", dir)...); code != ExitOK {
		t.Fatalf("--cleanup-policy delete: exit %d, %s", code, errOut)
	}
	for name, rolled := range map[string]bool{"__consumer_offsets-0": true, "legacy-0": true, "orders-0": false} {
		p, err := layout.ReadPartition(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(p.Segments) == 1 && p.Segments[0].Base > 0; got != rolled {
			t.Errorf("%s: rolled %v, want %v (segments %v)", name, got, rolled, p.Segments)
		}
	}
}

func TestRetentionNothingSelected(t *testing.T) {
	dir := retentionLogDir(t)
	before := treeHash(t, dir)
	code, out, errOut := runRetentionCmd(t, "retention", "--topic", "ord", dir)
	if code != ExitOK || out != "" || !strings.Contains(errOut, "no partition selected") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if treeHash(t, dir) != before {
		t.Error("the log directory changed")
	}
}

func TestRetentionBySizeOnePartition(t *testing.T) {
	dir := retentionLogDir(t)
	part := filepath.Join(dir, "orders-1")
	code, out, errOut := runRetentionCmd(t, "retention", "--retention-ms", "-1", "--retention-bytes", "20KiB", part)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "retention-bytes") || strings.Contains(out, "orders-0") {
		t.Errorf("output:\n%s", out)
	}
	p, err := layout.ReadPartition(part)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, s := range p.Segments {
		st, _ := os.Stat(s.Log)
		size += st.Size()
	}
	if size < 20<<10 || p.Segments[0].Base == 0 {
		t.Errorf("after: %d bytes from offset %d", size, p.Segments[0].Base)
	}
}

func TestRetentionCorruptSegment(t *testing.T) {
	dir := retentionLogDir(t)
	p, err := layout.ReadPartition(filepath.Join(dir, "orders-0"))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Segments[0]
	if err := os.Remove(s.TimeIndex); err != nil {
		t.Fatal(err)
	}
	// Byte 16 is the first batch's magic.
	f, err := os.OpenFile(s.Log, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{9}, 16)
	f.Close()
	code, _, errOut := runRetentionCmd(t, append(retentionArgs, dir)...)
	if code != ExitFailure {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := regexp.MustCompile(`(?m)^logtool: retention: ` + regexp.QuoteMeta(s.Log) + `: unknown magic 9 \(at byte 16\)$`)
	if !want.MatchString(errOut) {
		t.Errorf("stderr %q, want a line matching %s", errOut, want)
	}
	// Nothing of orders-0 went; orders-1 was handled.
	if _, err := os.Stat(s.Log); err != nil {
		t.Error(err)
	}
	if p1, _ := layout.ReadPartition(filepath.Join(dir, "orders-1")); p1.Segments[0].Base == 0 {
		t.Error("orders-1 was not processed")
	}
}

func TestRetentionUsage(t *testing.T) {
	dir := retentionLogDir(t)
	seg := filepath.Join(dir, "orders-0", layout.SegmentName(0, layout.LogExt))
	for _, args := range [][]string{
		{"retention"},
		{"retention", "--retention-ms", "-5", dir},
		{"retention", "--retention-ms", "1week", dir},
		{"retention", "--retention-bytes", "lots", dir},
		{"retention", "--now", "yesterday", dir},
		{"retention", "--topic", "(", dir},
		{"retention", seg},
		{"retention", filepath.Join(dir, "missing-0")},
		{"retention", "--bogus", dir},
	} {
		before := treeHash(t, dir)
		if code, _, errOut := runRetentionCmd(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "logtool") {
			t.Errorf("%v: exit %d, stderr %q; want %d", args, code, errOut, ExitUsage)
		}
		if treeHash(t, dir) != before {
			t.Errorf("%v changed the log directory", args)
		}
	}
}
