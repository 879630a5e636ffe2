package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
)

// The floor must check what it claims to: every batch of every range, in
// each magic, and fail on one flipped byte anywhere.
func TestFloorChecksEveryBatch(t *testing.T) {
	for _, magic := range []int8{0, 1, 2} {
		parts, err := gen.Generate(gen.Options{Out: t.TempDir(), Topics: []string{"t"}, Records: 40_000, Keys: 100,
			Magic: magic, BatchRecords: 10, SegmentBytes: 1 << 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(parts[0].Dir, "00000000000000000000.log")
		spans, err := split(log)
		if err != nil {
			t.Fatal(err)
		}
		if len(spans) < 2 {
			t.Fatalf("magic %d: %d ranges; the test wants several", magic, len(spans))
		}
		checkAll := func() error {
			buf := make([]byte, 64)
			for _, s := range spans {
				var err error
				if buf, err = check(s, buf); err != nil {
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
