package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/codec"
)

// generate writes a segment of 40,000 records in batches of 10 with o's
// format, and returns it with its ranges.
func generate(t *testing.T, o gen.Options) (string, []span) {
	t.Helper()
	o.Out, o.Topics, o.Records, o.Keys, o.BatchRecords, o.SegmentBytes, o.Seed = t.TempDir(), []string{"t"}, 40_000, 100, 10, 1<<30, 1
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(parts[0].Dir, "00000000000000000000.log")
	spans, err := split(log)
	if err != nil {
		t.Fatal(err)
	}
	return log, spans
}

// The floor must check what it claims to: every batch of every range, in
// each magic, and fail on one flipped byte anywhere.
func TestFloorChecksEveryBatch(t *testing.T) {
	for _, magic := range []int8{0, 1, 2} {
		log, spans := generate(t, gen.Options{Magic: magic})
		if len(spans) < 2 {
			t.Fatalf("magic %d: %d ranges; the test wants several", magic, len(spans))
		}
		checkAll := func() error {
			buf := make([]byte, 64)
			for _, s := range spans {
				var err error
				if buf, _, err = check(s, buf, nil, false); err != nil {
					return err
				}
			}
			return nil
		}
		if err := checkAll(); err != nil {
			t.Fatalf("magic %d: %v", magic, err)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		// A byte of a record value, in the last range.
		at := int64(len(data)) - 100
		data[at] ^= 0xff
		if err := os.WriteFile(log, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkAll(); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("magic %d: byte %d flipped: %v", magic, at, err)
		}
	}
}

// -lines must print what logtool dump prints for every batch, or its time
// would not be the floor of the same work.
func TestFloorLinesAreDumpLines(t *testing.T) {
	for _, c := range []codec.Type{codec.None, codec.LZ4} {
		log, spans := generate(t, gen.Options{Magic: 2, Compression: c, TransactionalRatio: 0.3, AbortRatio: 0.5})
		var got []byte
		var err error
		buf := make([]byte, bufBytes)
		for _, s := range spans {
			if buf, got, err = check(s, buf, got, true); err != nil {
				t.Fatal(err)
			}
		}
		set, err := target.Resolve([]string{log}, target.Options{Command: "dump", Takes: target.Files})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := dump.Run(set, dump.DefaultOptions(), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		// The dump's lines after its two header lines.
		want := out.Bytes()
		for range 2 {
			want = want[bytes.IndexByte(want, '\n')+1:]
		}
		if !bytes.Equal(got, want) {
			g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Fatalf("%v: line %d differs:\n got %s\nwant %s", c, i, g[i], w[i])
				}
			}
			t.Fatalf("%v: %d lines, want %d", c, len(g), len(w))
		}
		if !strings.Contains(string(got), "isControl: true") || !strings.Contains(string(got), "isTransactional: true") {
			t.Fatalf("%v: the data has no transactions to test", c)
		}
	}
}
