package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/extsort"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// offsetFindings checks the offset checkpoint content on its own, as
// verify does a file given alone.
func offsetFindings(t *testing.T, content string) (*Report, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), layout.RecoveryPointCheckpointFile)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Path: path}
	c := newCollector(rep, &Options{})
	if err := checkOffsets(c, path, offsetsScope{}); err != nil {
		t.Fatal(err)
	}
	c.flush()
	return rep, path
}

func TestCheckOffsetsRepeated(t *testing.T) {
	rep, path := offsetFindings(t, "0\n6\na 0 1\nb 0 2\na 0 3\n../x 0 1\na 0 4\nb 1 5\n")
	want := []Finding{
		{Severity: Problem, Code: CodeCheckpointRepeated, File: path, Pos: 16, Msg: "line 5: the partition appears again (first on line 3): Kafka writes each partition once, and a broker reading it keeps the last"},
		{Severity: Problem, Code: CodeCheckpointTopic, File: path, Pos: 22, Msg: fmt.Sprintf("line 6: %v: Kafka never writes such an entry", layout.ValidateTopic("../x"))},
		{Severity: Problem, Code: CodeCheckpointRepeated, File: path, Pos: 31, Msg: "line 7: the partition appears again (first on line 5): Kafka writes each partition once, and a broker reading it keeps the last"},
	}
	if rep.Problems != len(want) || fmt.Sprint(rep.Findings) != fmt.Sprint(want) {
		t.Errorf("findings:\n%v\nwant\n%v", rep.Findings, want)
	}
}

// TestCheckOffsetsManyRepeated: a partition listed on every line is
// reported on every line, the first lines listed.
func TestCheckOffsetsManyRepeated(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "a 0 %d\n", i)
	}
	rep, _ := offsetFindings(t, b.String())
	if rep.Problems != n-1 || len(rep.Findings) != maxListed+1 {
		t.Fatalf("%d problems, %d findings; want %d and %d", rep.Problems, len(rep.Findings), n-1, maxListed+1)
	}
	for i, f := range rep.Findings[:maxListed] {
		if want := fmt.Sprintf("line %d: the partition appears again (first on line %d)", i+4, i+3); !strings.HasPrefix(f.Msg, want) {
			t.Errorf("finding %d: %q, want %q", i, f.Msg, want)
		}
	}
	if last := rep.Findings[maxListed]; last.Msg != moreMsg(n-1-maxListed) || last.More != n-1-maxListed {
		t.Errorf("last finding %q", last.Msg)
	}
}

// TestCheckOffsetsManyTopics: every line of the first half names another
// topic, and every other line of the second half repeats one.
func TestCheckOffsetsManyTopics(t *testing.T) {
	const n = 50_000
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", 2*n)
	for i := range 2 * n {
		partition := 0
		if i >= n {
			partition = i % 2
		}
		fmt.Fprintf(&b, "t%d %d 0\n", i%n, partition)
	}
	rep, _ := offsetFindings(t, b.String())
	if rep.Problems != n/2 || !strings.HasPrefix(rep.Findings[0].Msg, fmt.Sprintf("line %d: the partition appears again (first on line 3)", n+3)) {
		t.Errorf("%d problems, want %d: %v", rep.Problems, n/2, rep.Findings[0])
	}
}

// TestEntryKeys: the keys repeatedEntries sorts tell partitions apart
// whatever bytes their topics hold, and a repeated partition's entries
// meet in line order.
func TestEntryKeys(t *testing.T) {
	entries := []checkpoint.OffsetEntry{
		{Topic: "a", Partition: 256, Line: 3}, {Topic: "a\x00\x00\x00\x01", Partition: 0, Line: 4},
		{Topic: "a\x01", Partition: 0, Line: 5}, {Topic: "a", Partition: 256, Line: 6}, {Topic: "", Partition: 0, Line: 7},
		{Topic: "a\x00", Partition: 1, Line: 8}, {Topic: "a", Partition: 256, Line: 9},
	}
	idx := extsort.New(1 << 20)
	for _, e := range entries {
		if err := idx.Add(appendEntryKey(nil, e)); err != nil {
			t.Fatal(err)
		}
	}
	var got [][2]int
	if err := repeatedEntries(idx, func(line, before int) { got = append(got, [2]int{line, before}) }); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{6, 3}, {9, 6}}; !slices.Equal(got, want) {
		t.Errorf("repeated %v, want %v", got, want)
	}
}
