package retention

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// seg is a segment for the rule tests: base offset, .log size and largest
// timestamp, which is never read from disk.
type seg struct {
	base, size, ts int64
}

func TestRules(t *testing.T) {
	three := []seg{{0, 100, 1000}, {10, 100, 2000}, {20, 100, 3000}}
	tests := []struct {
		name     string
		segs     []seg
		logEnd   int64
		logStart int64 // 0: the first base
		hw       int64 // 0: the log end
		ms       int64
		bytes    int64
		want     string // "base:rule ..." of the deleted segments
		start    int64
		rolled   bool
	}{
		{name: "time deletes the expired prefix", segs: three, logEnd: 30, ms: 2500, bytes: -1,
			want: "0:retention-ms 10:retention-ms", start: 20},
		{name: "time stops at the first kept segment", segs: []seg{{0, 100, 1000}, {10, 100, 9000}, {20, 100, 1000}}, logEnd: 30, ms: 3000, bytes: -1,
			want: "0:retention-ms", start: 10},
		{name: "time: exactly retention.ms old is kept", segs: three, logEnd: 30, ms: 4000, bytes: -1,
			want: "", start: 0},
		{name: "time: all expired rolls", segs: three, logEnd: 30, ms: 0, bytes: -1,
			want: "0:retention-ms 10:retention-ms 20:retention-ms", start: 30, rolled: true},
		{name: "time: a future timestamp is never expired", segs: []seg{{0, 100, 9e15}}, logEnd: 10, ms: 0, bytes: -1,
			want: "", start: 0},
		{name: "high watermark bounds every rule", segs: three, logEnd: 30, hw: 25, ms: 0, bytes: -1,
			want: "0:retention-ms 10:retention-ms", start: 20},
		{name: "high watermark inside the first segment", segs: three, logEnd: 30, hw: 5, ms: 0, bytes: 0,
			want: "", start: 0},
		{name: "size: one segment over", segs: three, logEnd: 30, ms: -1, bytes: 150,
			want: "0:retention-bytes", start: 10},
		{name: "size: diff exactly one segment", segs: three, logEnd: 30, ms: -1, bytes: 200,
			want: "0:retention-bytes", start: 10},
		{name: "size: exactly at the limit deletes nothing", segs: three, logEnd: 30, ms: -1, bytes: 300,
			want: "", start: 0},
		{name: "size: under the limit", segs: three, logEnd: 30, ms: -1, bytes: 301,
			want: "", start: 0},
		{name: "size: stops at a segment bigger than what is left", segs: []seg{{0, 50, 0}, {10, 200, 0}, {20, 30, 0}}, logEnd: 30, ms: -1, bytes: 100,
			want: "0:retention-bytes", start: 10},
		{name: "size: zero rolls", segs: three, logEnd: 30, ms: -1, bytes: 0,
			want: "0:retention-bytes 10:retention-bytes 20:retention-bytes", start: 30, rolled: true},
		{name: "log start: segments wholly below", segs: three, logEnd: 30, logStart: 20, ms: -1, bytes: -1,
			want: "0:log-start-offset 10:log-start-offset", start: 20},
		{name: "log start inside a segment keeps it", segs: three, logEnd: 30, logStart: 15, ms: -1, bytes: -1,
			want: "0:log-start-offset", start: 15},
		{name: "log start never takes the last segment", segs: three, logEnd: 30, logStart: 30, ms: -1, bytes: -1,
			want: "0:log-start-offset 10:log-start-offset", start: 30},
		{name: "an empty last segment is never deleted", segs: []seg{{0, 100, 1000}, {10, 0, 1000}}, logEnd: 10, ms: 0, bytes: 0,
			want: "0:retention-bytes", start: 10},
		{name: "rules run in Kafka's order", segs: []seg{{0, 100, 1000}, {10, 100, 1000}, {20, 100, 1000}, {30, 100, 5000}}, logEnd: 40,
			logStart: 10, ms: 3000, bytes: 200,
			want: "0:log-start-offset 10:retention-bytes 20:retention-ms", start: 30},
		{name: "after a size roll the time rule sees only the empty segment", segs: three, logEnd: 30, ms: 0, bytes: 0,
			want: "0:retention-bytes 10:retention-bytes 20:retention-bytes", start: 30, rolled: true},
		{name: "nothing enabled but the log start rule", segs: three, logEnd: 30, ms: -1, bytes: -1,
			want: "", start: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &partitionLog{logEnd: tt.logEnd, highWatermark: tt.logEnd, logStart: tt.segs[0].base}
			if tt.hw != 0 {
				l.highWatermark = tt.hw
			}
			l.logStart = max(l.logStart, tt.logStart)
			for _, s := range tt.segs {
				ts := Timestamp{Ms: s.ts, Source: logseg.FromTimeIndex}
				l.segs = append(l.segs, &segment{Segment: logseg.Segment{Segment: layout.Segment{Base: s.base}, Size: s.size}, largest: &ts})
			}
			if err := l.applyRules(Options{Config: deletePolicy(tt.ms, tt.bytes), NowMs: 5000}, &Result{}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range l.deleted {
				got = append(got, strconv.FormatInt(d.Segment.Base, 10)+":"+string(d.Rule))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("deleted %q, want %q", g, tt.want)
			}
			if l.logStart != tt.start {
				t.Errorf("log start %d, want %d", l.logStart, tt.start)
			}
			if (l.rolled != nil) != tt.rolled {
				t.Errorf("rolled %v, want %v", l.rolled != nil, tt.rolled)
			}
			if tt.rolled && (len(l.segs) != 1 || l.segs[0].Base != tt.logEnd || l.segs[0].Size != 0) {
				t.Errorf("after a roll the log should be one empty segment at %d, got %d segments", tt.logEnd, len(l.segs))
			}
		})
	}
}

// The time rule reads timestamps lazily: segments after the first one it
// keeps are never opened, which matters when each read scans a segment.
func TestTimeRuleStopsReading(t *testing.T) {
	l := &partitionLog{logEnd: 30, highWatermark: 30}
	expired := Timestamp{Ms: 0}
	kept := Timestamp{Ms: 4999}
	l.segs = []*segment{
		{Segment: logseg.Segment{Segment: layout.Segment{Base: 0}, Size: 1}, largest: &expired},
		{Segment: logseg.Segment{Segment: layout.Segment{Base: 10}, Size: 1}, largest: &kept},
		// No file and no timestamp: reading it would fail.
		{Segment: logseg.Segment{Segment: layout.Segment{Base: 20, Log: "/nonexistent/00000000000000000020.log"}, Size: 1}},
	}
	if err := l.applyRules(Options{Config: deletePolicy(1000, -1), NowMs: 5000}, &Result{}); err != nil {
		t.Fatal(err)
	}
	if len(l.deleted) != 1 || l.deleted[0].Largest == nil || l.deleted[0].Largest.Ms != 0 {
		t.Errorf("deleted %+v, want segment 0 with its timestamp", l.deleted)
	}
}

func TestTruncateFromStart(t *testing.T) {
	e := func(pairs ...int64) []checkpoint.EpochEntry {
		var out []checkpoint.EpochEntry
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, checkpoint.EpochEntry{Epoch: int32(pairs[i]), StartOffset: pairs[i+1]})
		}
		return out
	}
	tests := []struct {
		in      []checkpoint.EpochEntry
		start   int64
		want    []checkpoint.EpochEntry
		removed bool
	}{
		{e(0, 0, 1, 100, 2, 200), 150, e(1, 150, 2, 200), true},
		{e(0, 0, 1, 100, 2, 200), 200, e(2, 200), true},
		{e(0, 0, 1, 100, 2, 200), 500, e(2, 500), true},
		{e(0, 0, 1, 100), 0, e(0, 0, 1, 100), true}, // removed and put back unchanged: Kafka still writes
		{e(3, 50), 10, e(3, 50), false},
		{nil, 10, nil, false},
	}
	for _, tt := range tests {
		got, removed := truncateFromStart(tt.in, tt.start)
		if !slices.Equal(got, tt.want) || removed != tt.removed {
			t.Errorf("truncateFromStart(%v, %d) = %v, %v; want %v, %v", tt.in, tt.start, got, removed, tt.want, tt.removed)
		}
	}
}

func TestLoadEpochs(t *testing.T) {
	e := func(pairs ...int64) []checkpoint.EpochEntry {
		var out []checkpoint.EpochEntry
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, checkpoint.EpochEntry{Epoch: int32(pairs[i]), StartOffset: pairs[i+1]})
		}
		return out
	}
	tests := []struct {
		in, want []checkpoint.EpochEntry
	}{
		{e(0, 0, 1, 100, 2, 200), e(0, 0, 1, 100, 2, 200)},
		{e(0, 0, 0, 5), e(0, 0)},                   // same epoch later: no update
		{e(3, 10, 3, 5), e(3, 5)},                  // same epoch earlier: replaces it
		{e(0, 0, 2, 100, 1, 50), e(0, 0, 1, 50)},   // a lower epoch truncates the higher one
		{e(0, 0, 1, 100, 2, 100), e(0, 0, 2, 100)}, // same start offset: the newer epoch wins
		{e(5, 0, 1, 10, 2, 20), e(1, 10, 2, 20)},   // everything after epoch 5 contradicts it
		{e(0, 0, 1, 100, 2, 50), e(0, 0, 2, 50)},   // start offsets must rise too
		{e(0, 0, 1, 100, 1, 100), e(0, 0, 1, 100)}, // exact repeat
		{e(0, 7, 1, 100, 0, 3), e(0, 3)},           // back to epoch 0 at an earlier offset
		{e(2, 10, 1, 20, 3, 5), e(3, 5)},           // each entry truncates all before
		{e(1, 1, 2, 2, 3, 3, 4, 4), e(1, 1, 2, 2, 3, 3, 4, 4)},
	}
	for _, tt := range tests {
		got, err := loadEpochs(tt.in, "leader-epoch-checkpoint")
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("loadEpochs(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range [][]checkpoint.EpochEntry{e(-1, 0), e(0, 0, 1, -5)} {
		if _, err := loadEpochs(bad, "f"); err == nil {
			t.Errorf("loadEpochs(%v) accepted a negative value Kafka refuses", bad)
		}
	}
}

func TestSnapshotsBelow(t *testing.T) {
	snaps := func(offs ...int64) []string {
		var out []string
		for _, o := range offs {
			out = append(out, "/p/"+layout.SegmentName(o, layout.SnapshotExt))
		}
		return out
	}
	tests := []struct {
		have  []string
		start int64
		want  []string
	}{
		{snaps(10, 20, 30), 20, snaps(10)},
		{snaps(10, 20, 30), 25, snaps(10)}, // 20 is the newest at or below 25: kept
		{snaps(10, 20, 30), 30, snaps(10, 20)},
		{snaps(10, 20, 30), 5, nil},
		{snaps(10, 20, 30), 100, snaps(10, 20)},
		{nil, 100, nil},
	}
	for _, tt := range tests {
		if got := snapshotsBelow(tt.have, tt.start); !slices.Equal(got, tt.want) {
			t.Errorf("snapshotsBelow(%v, %d) = %v, want %v", tt.have, tt.start, got, tt.want)
		}
	}
}
