package verify

import (
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// TestDamagedRanges damages the length field of a batch in the middle of a
// segment, an offset of a later batch and the segment's last batch (torn).
// Before, verify stopped at the first damage and called it a torn last
// batch; every damaged range is reported, the later batches are checked, and
// only the real end is called torn.
func TestDamagedRanges(t *testing.T) {
	fx := small(t, 2, codec.None)
	log := segmentLogs(t, fx)[0]
	bs := testutil.Batches(t, log)
	if len(bs) < 6 {
		t.Fatalf("want at least 6 batches in %s, have %d", log, len(bs))
	}
	mid, later, last := bs[1], bs[3], bs[len(bs)-1]
	edit(t, log, func(b []byte) []byte {
		putInt32(b[mid.Pos+8:], 1<<20) // declares more bytes than remain
		// The base offset lies outside the checksum: back to offset 0.
		putInt64(b[later.Pos:], 0)
		return b[:last.Pos+int64(last.Size)/2]
	})
	r := run(t, Options{}, fx.part)
	got := r.problemsAbout(log)
	if len(got) != 3 {
		t.Fatalf("want 3 problems about %s, got %d:\n%s", log, len(got), r)
	}
	if f := got[0]; f.Pos != mid.Pos || strings.Contains(f.Msg, "torn") ||
		!strings.Contains(f.Msg, "damaged range [") || !strings.Contains(f.Msg, "valid batches resume at offset") {
		t.Errorf("first problem %q at byte %d, want the damaged range at byte %d", f.Msg, f.Pos, mid.Pos)
	}
	if f := got[1]; f.Pos != later.Pos || !strings.Contains(f.Msg, "offsets must increase") {
		t.Errorf("second problem %q at byte %d, want the offsets of the batch at byte %d", f.Msg, f.Pos, later.Pos)
	}
	if f := got[2]; f.Pos != last.Pos || !strings.HasPrefix(f.Msg, "torn last batch") {
		t.Errorf("third problem %q at byte %d, want the torn last batch at byte %d", f.Msg, f.Pos, last.Pos)
	}
	if rep := r.reports[0]; rep.Salvage != fx.part {
		t.Errorf("salvage suggested for %q, want %q", rep.Salvage, fx.part)
	}
}
