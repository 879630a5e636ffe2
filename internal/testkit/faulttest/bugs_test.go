package faulttest

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestCompactStopsAtOffsetsOutOfOrder: an entry of a segment below the
// active one whose offset went back (verify: "offset ... not above the batch
// before it") stops compact with its position; it was once compacted as if
// it were fine.
func TestCompactStopsAtOffsetsOutOfOrder(t *testing.T) {
	for _, f := range allFormats() {
		t.Run(f.name, func(t *testing.T) {
			dir := fixture(t, matrixOptions(f))
			log := segments(t, onlyPartition(t, dir))[0].Log
			at, _ := damagedEntry(t, log)
			b := readFile(t, log)
			// The offset of the previous entry's first record: back by
			// more than a batch, under a valid checksum (it covers no
			// offset).
			binary.BigEndian.PutUint64(b[at.Pos:], binary.BigEndian.Uint64(b[at.Pos:])-20)
			replaceFile(t, log, b)
			before := digest(t, dir)
			r := run(t, "compact", "--topic", ".*", "--now", compactNow, dir)
			wantStopped(t, "compact", r, dir, before, "00000000000000000000.log")
		})
	}
}

// TestUpgradeStopsAtSegmentWithoutEntries: a segment that holds no whole
// entry (cut inside its first one, or only zeros) stops the partition like
// any segment ending in a torn entry or a zero-filled tail; it was once
// passed over as "nothing to convert" while the rest was upgraded.
func TestUpgradeStopsAtSegmentWithoutEntries(t *testing.T) {
	for _, cut := range []int{1, 11, 40} {
		f := format{"v0-none", 0, 0}
		dir := fixture(t, matrixOptions(f))
		log := segments(t, onlyPartition(t, dir))[0].Log
		replaceFile(t, log, readFile(t, log)[:cut])
		before := digest(t, dir)
		r := run(t, "upgrade", "--to-magic", "2", dir)
		wantStopped(t, "upgrade", r, dir, before, "00000000000000000000.log")
	}
}

// TestZeroTailNotActive documents how a zero-filled tail in a segment that
// is not the active one is treated: verify reports it, compact takes it for
// the end of the data as Kafka's batch reader does (a broker's own cleaner
// would too) and drops it.
func TestZeroTailNotActive(t *testing.T) {
	f := format{"v2-none", 2, 0}
	dir := fixture(t, matrixOptions(f))
	log := segments(t, onlyPartition(t, dir))[0].Log
	b := readFile(t, log)
	replaceFile(t, log, append(b, make([]byte, 100)...))
	if r := run(t, "verify", dir); r.code != 3 || !strings.Contains(r.stdout, "zero") {
		t.Errorf("verify: %v\n%s", r, r.stdout)
	}
	if r := run(t, "compact", "--topic", ".*", "--now", compactNow, dir); r.code != 0 {
		t.Errorf("compact: %v", r)
	}
	if r := run(t, "verify", "--deep", dir); r.code != 0 {
		t.Errorf("verify after compact: %v\n%s", r, r.stdout)
	}
}
