package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestKeyHashChurn: four source partitions replayed at once
// by key hash into eight destination partitions, with few records in
// flight, so chunks are acknowledged out of order and reused constantly
// across partitions: every record arrives once, with its bytes, headers and
// timestamp, and the records of each key keep their order.
func TestKeyHashChurn(t *testing.T) {
	o := gen.Options{Topics: []string{"events"}, Partitions: 4, Records: 3000, Keys: 50, ValueBytes: 300,
		BatchRecords: 13, Magic: 2, Compression: codec.LZ4, TombstoneRatio: 0.1, Seed: 77, Out: t.TempDir()}
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*layout.Partition
	var want []rec
	for _, x := range parts {
		p, _ := layout.ReadPartition(x.Dir)
		ps = append(ps, p)
		want = append(want, source(t, p.Path, fetch.ReadCommitted)...)
	}
	c := cluster(t, 8, []string{"events"})
	op := options(c)
	op.Partitioning, op.Workers, op.MaxInFlight = KeyHash, 4, 37
	if _, err := Run(context.Background(), ps, op); err != nil {
		t.Fatal(err)
	}
	got := consume(t, c, "events", len(want))
	if len(got) != len(want) {
		t.Fatalf("%d records arrived, want %d", len(got), len(want))
	}
	str := func(r rec) string {
		r.Partition = 0
		return fmt.Sprintf("%v|%t|%d", r, r.Key == nil, r.Timestamp)
	}
	// Per key (and source partition: gen's ids are per partition), the
	// sequence must be the source's.
	seq := func(rs []rec, bySrc bool) map[string][]string {
		m := map[string][]string{}
		for _, r := range rs {
			k := fmt.Sprintf("%q/%t", r.Key, r.Key == nil)
			if bySrc {
				k = fmt.Sprintf("%d/%s", r.Partition, k)
			}
			m[k] = append(m[k], str(r))
		}
		return m
	}
	var ws, gs []string
	for _, r := range want {
		ws = append(ws, str(r))
	}
	for _, r := range got {
		gs = append(gs, str(r))
	}
	slices.Sort(ws)
	slices.Sort(gs)
	for i := range ws {
		if ws[i] != gs[i] {
			t.Fatalf("records differ (sorted %d):\n got %s\nwant %s", i, gs[i], ws[i])
		}
	}
	// Each key lives in one destination partition, so its records from
	// all sources interleave there; those of one source keep their order.
	wk := seq(want, false)
	for k, g := range seq(got, false) {
		if k == "\"\"/true" {
			continue // null keys are spread
		}
		if len(g) != len(wk[k]) {
			t.Fatalf("key %s: %d records, want %d", k, len(g), len(wk[k]))
		}
	}
	for sp := range int32(4) {
		var src []rec
		for _, r := range want {
			if r.Partition == sp {
				src = append(src, r)
			}
		}
		pos := map[string]int{}
		for i, r := range src {
			pos[str(r)] = i
		}
		last := map[string]int{}
		for _, r := range got {
			i, ok := pos[str(r)]
			if !ok || r.Key == nil {
				continue
			}
			k := string(r.Key)
			if j, seen := last[k]; seen && i < j {
				t.Fatalf("source partition %d key %q: record %d arrived after record %d", sp, k, i, j)
			}
			last[k] = i
		}
	}
}
