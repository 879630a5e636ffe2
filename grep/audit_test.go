package grep

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt/codec"
)

// refFindings are the versions the reference finds past their deadline
// among the records pred accepts: offset → the first newer version's
// offset, -1 for a tombstone.
func refFindings(log []refRecord, st []string, pred func(r *refRecord) bool, o *compact.Options) map[int64]int64 {
	out := map[int64]int64{}
	for i := range log {
		r := &log[i]
		if pred != nil && !pred(r) || !r.isVersion() {
			continue
		}
		switch st[i] {
		case "superseded", "deleted":
			j := i + 1
			for !log[j].isVersion() || string(log[j].Key) != string(r.Key) {
				j++
			}
			if log[j].written+o.MaxLag < o.Now {
				out[r.Offset] = log[j].Offset
			}
		case "tombstone":
			if r.written+o.MaxLag+o.DeleteRetention < o.Now {
				out[r.Offset] = -1
			}
		}
	}
	return out
}

func findingsOf(ps []problem) map[int64]int64 {
	out := map[int64]int64{}
	for _, p := range ps {
		by := int64(-1)
		if p.SupersededBy != nil {
			by = *p.SupersededBy
		}
		out[p.Offset] = by
	}
	return out
}

// auditGen is a compacted topic written over 50 minutes: 3000 records of
// 1000 keys, a tenth tombstones, transactions that commit and abort.
func auditGen(t *testing.T, c codec.Type) string {
	return genDir(t, gen.Options{Topics: []string{"t"}, Records: 3000, Keys: 1000, Magic: 2, Compression: c, BatchRecords: 5,
		SegmentBytes: 24 << 10, TombstoneRatio: 0.1, TransactionalRatio: 0.3, AbortRatio: 0.3, TimeStep: time.Second, Seed: 4})
}

// TestAuditBeforeAndAfterCompact: the audit finds exactly the versions an
// independent reading says are past their deadline, with matchers and
// without; once compact --max-lag has run with the same lag and clock,
// the same audits find nothing.
func TestAuditBeforeAndAfterCompact(t *testing.T) {
	dir := auditGen(t, codec.Zstd)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	o := compact.DefaultOptions(start + (45 * time.Minute).Milliseconds())
	o.MaxLag, o.DeleteRetention = (10 * time.Minute).Milliseconds(), (5 * time.Minute).Milliseconds()
	even := func(r *refRecord) bool {
		return r.Key != nil && strings.ContainsAny(string(r.Key[len(r.Key)-1:]), "02468")
	}
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"[02468]$"}})

	audit := func(what string) (matched, all map[int64]int64, res *Result) {
		t.Helper()
		_, ps, _ := runJobs(t, []Job{{Partition: partition(t, dir), Audit: &Audit{Cleaner: o}}}, Options{Match: m})
		matched = findingsOf(ps)
		_, ps, rs := runJobs(t, []Job{{Partition: partition(t, dir), Audit: &Audit{Cleaner: o}}}, Options{})
		for _, p := range ps {
			if p.Segment == "" || p.Count < 1 {
				t.Errorf("%s: problem without place or count: %+v", what, p)
			}
		}
		return matched, findingsOf(ps), rs[0]
	}

	log := refLog(t, dir)
	st := refStatuses(log)
	want := refFindings(log, st, even, &o)
	got, _, res := audit("before")
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Fatalf("before compact: %d findings %v\nwant %d %v", len(got), got, len(want), want)
	}
	var tombs int
	for _, by := range want {
		if by < 0 {
			tombs++
		}
	}
	if tombs == 0 || tombs == len(want) {
		t.Errorf("want both kinds of findings, got %d tombstones of %d", tombs, len(want))
	}
	checkAuditAll(t, "before compact", log, st, &o, res)

	if _, errs := compact.Run([]compact.Job{{Dir: dir, Config: o.Config}}, o, 1, func() {}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	log = refLog(t, dir)
	st = refStatuses(log)
	if w := refFindings(log, st, nil, &o); len(w) > 0 {
		t.Fatalf("the reference still finds %d versions past their deadline after compact: %v", len(w), w)
	}
	got, all, res := audit("after")
	if len(got)+len(all) > 0 {
		t.Errorf("after compact: findings %v, and without matchers %v", got, all)
	}
	checkAuditAll(t, "after compact", log, st, &o, res)
}

// checkAuditAll holds an audit without matchers to the reference.
func checkAuditAll(t *testing.T, what string, log []refRecord, st []string, o *compact.Options, res *Result) {
	t.Helper()
	var versions, past, tombs, tombsPast int64
	oldest, oldestPast := int64(-1), int64(-1)
	keys := map[string]bool{}
	for i := range log {
		r := &log[i]
		if !r.isVersion() {
			continue
		}
		keys[string(r.Key)] = true
		switch st[i] {
		case "superseded", "deleted":
			versions++
			if oldest < 0 {
				oldest = r.Offset
			}
			if pastAt(log, i, o) {
				past++
				if oldestPast < 0 {
					oldestPast = r.Offset
				}
			}
		case "tombstone":
			tombs++
			if r.written+o.MaxLag+o.DeleteRetention < o.Now {
				tombsPast++
			}
		}
	}
	got := fmt.Sprintf("keys %d, versions %d past %d oldest %d/%d, tombstones %d past %d, findings %d",
		res.Keys, res.Versions, res.VersionsPast, oldestOf(res.Oldest()), oldestOf(res.OldestPast()), res.Tombstones, res.TombstonesPast, res.Findings)
	want := fmt.Sprintf("keys %d, versions %d past %d oldest %d/%d, tombstones %d past %d, findings %d",
		len(keys), versions, past, oldest, oldestPast, tombs, tombsPast, past+tombsPast)
	if got != want {
		t.Errorf("%s: audit of every key:\n got %s\nwant %s", what, got, want)
	}
}

// pastAt tells whether the version at i is past its deadline: its first
// newer version was written more than the max lag ago.
func pastAt(log []refRecord, i int, o *compact.Options) bool {
	for j := i + 1; j < len(log); j++ {
		if log[j].isVersion() && string(log[j].Key) == string(log[i].Key) {
			return log[j].written+o.MaxLag < o.Now
		}
	}
	return false
}

func oldestOf(f Finding) int64 {
	if f.Count == 0 {
		return -1
	}
	return f.Offset
}

// TestAuditRange: findings are those of the matches, wherever their newer
// version is: a range that ends before it still reports them.
func TestAuditRange(t *testing.T) {
	dir := auditGen(t, codec.LZ4)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	o := compact.DefaultOptions(start + (45 * time.Minute).Milliseconds())
	o.MaxLag, o.DeleteRetention = (10 * time.Minute).Milliseconds(), (5 * time.Minute).Milliseconds()
	m, _ := NewMatcher(Spec{ValueContains: []string{"refund"}})
	log := refLog(t, dir)
	st := refStatuses(log)
	for _, r := range [][2]int64{{0, 400}, {1200, 1210}, {2900, -1}} {
		rng := fetchRange(r[0], r[1])
		_, ps, _ := runJobs(t, []Job{{Partition: partition(t, dir), Audit: &Audit{Cleaner: o}}}, Options{Match: m, Range: rng})
		want := refFindings(log, st, func(rr *refRecord) bool {
			return strings.Contains(string(rr.Value), "refund") && rr.Offset >= r[0] && (r[1] < 0 || rr.Offset <= r[1])
		}, &o)
		if got := findingsOf(ps); !maps.Equal(got, want) {
			t.Errorf("offsets %v: findings %v\nwant %v", r, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}

// TestAuditSegments: naming segments limits the findings to the matches
// in them, though their newer versions are in later segments.
func TestAuditSegments(t *testing.T) {
	dir := auditGen(t, codec.Snappy)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	o := compact.DefaultOptions(start + (45 * time.Minute).Milliseconds())
	o.MaxLag, o.DeleteRetention = (10 * time.Minute).Milliseconds(), (5 * time.Minute).Milliseconds()
	p := partition(t, dir)
	if len(p.Segments) < 4 {
		t.Fatalf("want several segments, got %d", len(p.Segments))
	}
	seg := filepath.Base(p.Segments[1].Log)
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"[13579]$"}})
	_, ps, _ := runJobs(t, []Job{{Partition: p, Segments: []int64{p.Segments[1].Base}, Audit: &Audit{Cleaner: o}}}, Options{Match: m})
	log := refLog(t, dir)
	want := refFindings(log, refStatuses(log), func(r *refRecord) bool {
		return r.segment == seg && r.Key != nil && strings.ContainsAny(string(r.Key[len(r.Key)-1:]), "13579")
	}, &o)
	if got := findingsOf(ps); len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("findings %v\nwant %v", got, want)
	}
}

// TestFindingsAfterMatches: a partition's findings follow all its match
// lines rather than each segment's, and none is lost when more of them than
// a chunk are held back on disk.
func TestFindingsAfterMatches(t *testing.T) {
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 8000, Keys: 2, Magic: 2, BatchRecords: 4,
		SegmentBytes: 64 << 10, TimeStep: time.Second, Seed: 9})
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	o := compact.DefaultOptions(start + (30 * 24 * time.Hour).Milliseconds())
	o.MaxLag = time.Minute.Milliseconds()
	m, _ := NewMatcher(Spec{KeyRegexps: []string{"."}})
	p := partition(t, dir)
	if len(p.Segments) < 5 {
		t.Fatalf("%d segments; the test wants matches and findings in many", len(p.Segments))
	}
	var out bytes.Buffer
	var res *Result
	err := Run(&out, []Job{{Partition: p, Audit: &Audit{Cleaner: o}}}, Options{Match: m, Workers: 2, KeyMapMemory: 64 << 20,
		Range: fetch.DefaultOptions(), Format: Format{JSON: true, KeyDecoder: textdec.Base64, ValueDecoder: textdec.Base64}},
		func(r *Result) { res = r })
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	var matches, problems int64
	for line := range strings.Lines(out.String()) {
		switch {
		case strings.HasPrefix(line, `{"type":"match"`):
			if problems > 0 {
				t.Fatalf("a match line after %d problem lines", problems)
			}
			matches++
		case strings.HasPrefix(line, `{"type":"problem"`):
			problems++
		}
	}
	if problems != res.Findings || problems < 5000 || int64(out.Len()) < 2*chunkSize {
		t.Errorf("%d matches, %d problem lines for %d findings in %d bytes; want every finding, and more than a chunk of them",
			matches, problems, res.Findings, out.Len())
	}
}

// OldestPast is Oldest for the versions past their deadline.
func (r *Result) OldestPast() Finding { return r.oldestPast.Finding }
