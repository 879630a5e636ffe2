package logfmt

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// headerTrace is what a reader gives of each entry that a header view
// keeps, the verdicts, and how reading stops and goes on past damage.
func headerTrace(r batchReader, keep func(*Batch) bool) string {
	var b strings.Builder
	for steps := 0; steps < 100000; steps++ {
		if r.Next() {
			b.WriteString(entryLine(r.Batch(), keep, r.Pos()))
			continue
		}
		fmt.Fprintf(&b, "stop at %d: %v %q %v\n", r.Pos(), r.End(), r.EndDetail(), r.Err())
		if r.Err() == nil && r.End() != EndTorn {
			break
		}
		if !r.Resync() {
			fmt.Fprintf(&b, "no resync: %v\n", r.Err())
			break
		}
		fmt.Fprintf(&b, "resync to %d\n", r.Pos())
	}
	return b.String()
}

// entryLine is a trace's line for entry e, which next follows.
func entryLine(e *Batch, keep func(*Batch) bool, next int64) string {
	var b strings.Builder
	hdr := e.Data[:min(len(e.Data), V2HeaderSize)]
	fmt.Fprintf(&b, "entry %d %d %08x %d %d %v", e.Pos, e.Size(), crc32.ChecksumIEEE(hdr), e.StoredCRC(), e.ComputeCRC(), e.Validate())
	if e.Magic() >= 0 && e.Magic() <= 2 {
		fmt.Fprintf(&b, " last %d ts %d", e.LastOffset(), e.MaxTimestamp())
	}
	if keep != nil && keep(e) {
		fmt.Fprintf(&b, " whole %08x", crc32.ChecksumIEEE(e.Data))
	}
	fmt.Fprintf(&b, " next %d\n", next)
	return b.String()
}

// renderTrace is the trace of h with Render writing each entry's line,
// except those refuse picks: the ranges' text, then what Next gives. Each
// text is given back only after the next one came, and must not have
// changed by then.
func renderTrace(t *testing.T, h *HeaderReader, refuse func(*Batch) bool) string {
	h.Render = func() Renderer {
		return RenderFunc(func(dst []byte, e *Batch) ([]byte, bool) {
			if refuse(e) {
				return append(dst, "refused"...), false
			}
			return append(dst, entryLine(e, nil, e.Pos+int64(e.Size()))...), true
		})
	}
	var b strings.Builder
	var held []byte
	release := func() {}
	for {
		text, _, rel, ok := h.Rendered()
		if !ok {
			break
		}
		if len(text) == 0 {
			t.Fatal("a range without a batch was given")
		}
		if !bytes.Equal(held, []byte(b.String()[b.Len()-len(held):])) {
			t.Fatal("a text changed before it was given back")
		}
		release()
		b.Write(text)
		held, release = text, rel
	}
	release()
	b.WriteString(headerTrace(h, nil))
	return b.String()
}

// rangePerBatch is a reader of a segment on two goroutines, a range for
// each batch, and the batches' positions.
func rangePerBatch(t *testing.T, seed uint64) (*HeaderReader, []int64) {
	smallRanges(t, 1<<20)
	seg := deepSegment(t, seed)
	var cuts []int64
	for _, s := range batchStarts(seg) {
		cuts = append(cuts, int64(s))
	}
	return NewHeaderReader(bytes.NewReader(seg), int64(len(seg)), "seg", 0, slices.Values(cuts), 2), cuts
}

// TestRenderedTextsMayBeHeld: a caller may keep every text it was given
// (the dump's writer holds several) and Rendered still goes on.
func TestRenderedTextsMayBeHeld(t *testing.T) {
	h, cuts := rangePerBatch(t, 2)
	defer h.Close()
	h.Render = func() Renderer {
		return RenderFunc(func(dst []byte, e *Batch) ([]byte, bool) { return fmt.Appendf(dst, "%d\n", e.Pos), true })
	}
	var held [][]byte
	for {
		text, _, _, ok := h.Rendered()
		if !ok {
			break
		}
		held = append(held, text)
	}
	// A range a batch, each batch's text its own.
	if len(held) != len(cuts) {
		t.Fatalf("%d texts, want %d", len(held), len(cuts))
	}
	for i, text := range held {
		if want := fmt.Sprintf("%d\n", cuts[i]); string(text) != want {
			t.Fatalf("text %d: %q, want %q", i, text, want)
		}
	}
}

// sameHeaders holds a HeaderReader, with each set of cuts and workers, to
// a SegmentReader on seg, from byte start.
func sameHeaders(t *testing.T, seg []byte, start int64, cuts map[string][]int64, keep func(*Batch) bool) {
	t.Helper()
	size := int64(len(seg))
	plain := NewSegmentReader(bytes.NewReader(seg), size, "seg")
	plain.SeekTo(start)
	want := headerTrace(plain, keep)
	for name, cs := range cuts {
		for _, w := range []int{1, 2, 3, 5} {
			h := NewHeaderReader(bytes.NewReader(seg), size, "seg", start, slices.Values(cs), w)
			h.Keep = keep
			got := headerTrace(h, keep)
			h.Close()
			if got != want {
				t.Fatalf("cuts %s, %d workers: %s", name, w, firstDiff(got, want))
			}
			if keep != nil {
				continue
			}
			// Rendered on the ranges' goroutines, all of them, or all but
			// the batches from the middle one on.
			mid := int64(len(seg) / 2)
			for refusing, refuse := range map[string]func(*Batch) bool{
				"none":   func(*Batch) bool { return false },
				"middle": func(e *Batch) bool { return e.Pos <= mid && mid < e.Pos+int64(e.Size()) },
			} {
				h := NewHeaderReader(bytes.NewReader(seg), size, "seg", start, slices.Values(cs), w)
				got := renderTrace(t, h, refuse)
				h.Close()
				if got != want {
					t.Fatalf("rendered, refusing %s, cuts %s, %d workers: %s", refusing, name, w, firstDiff(got, want))
				}
			}
		}
	}
}

// cutSets are true cuts, cuts with wrong ones among them (inside entries,
// past the end), and random ones.
func cutSets(seg []byte, seed uint64) map[string][]int64 {
	starts := batchStarts(seg)
	rng := rand.New(rand.NewPCG(seed, 9))
	var all, every3, wrong, random []int64
	for i, s := range starts {
		all = append(all, int64(s))
		if i%3 == 0 {
			every3 = append(every3, int64(s))
		}
		wrong = append(wrong, int64(s))
		if i%4 == 1 {
			wrong = append(wrong, int64(s+1+rng.IntN(60)))
		}
	}
	wrong = append(wrong, int64(len(seg)+5))
	for range 20 {
		random = append(random, int64(rng.IntN(len(seg))))
	}
	slices.Sort(random)
	return map[string][]int64{"none": nil, "all": all, "every3": every3, "wrong": wrong, "random": random}
}

// smallRanges makes every cut start a range, and restores the sizes after.
func smallRanges(t *testing.T, infos int) {
	rb, mi, kb := headersRangeBytes, headersMaxInfos, headersKeepBytes
	headersRangeBytes, headersMaxInfos = 1, infos
	t.Cleanup(func() { headersRangeBytes, headersMaxInfos, headersKeepBytes = rb, mi, kb })
}

func TestHeaderReaderMatchesSegmentReader(t *testing.T) {
	smallRanges(t, 1<<20)
	keepControl := func(b *Batch) bool { return b.IsControl() }
	for seed := range uint64(3) {
		seg := deepSegment(t, seed)
		cuts := cutSets(seg, seed)
		sameHeaders(t, seg, 0, cuts, nil)
		sameHeaders(t, seg, 0, cuts, keepControl)
		sameHeaders(t, seg, int64(batchStarts(seg)[5]), cuts, keepControl)
	}
	for name, seg := range windowInputs(t) {
		t.Run(name, func(t *testing.T) { sameHeaders(t, seg, 0, cutSets(seg, 4), keepControl) })
	}
}

// TestHeaderReaderRangeBounds ends ranges early on their bounds of headers
// and whole batches: reading goes on with one goroutine, the same.
func TestHeaderReaderRangeBounds(t *testing.T) {
	seg := deepSegment(t, 11)
	cuts := cutSets(seg, 11)
	for _, infos := range []int{1, 2, 7} {
		smallRanges(t, infos)
		sameHeaders(t, seg, 0, cuts, nil)
	}
	smallRanges(t, 1<<20)
	headersKeepBytes = 500
	sameHeaders(t, seg, 0, cuts, func(b *Batch) bool { return b.Pos%2 == 0 })
}

func TestHeaderReaderDamage(t *testing.T) {
	smallRanges(t, 1<<20)
	seg := deepSegment(t, 7)
	starts := batchStarts(seg)
	damages := map[string]func(e []byte) []byte{
		"length":     func(e []byte) []byte { e[11] ^= 0x01; return e },
		"length-2GB": func(e []byte) []byte { e[8] = 0x7f; return e },
		"magic":      func(e []byte) []byte { e[16] = 3; return e },
		"crc":        func(e []byte) []byte { e[13] ^= 0xff; e[19] ^= 0xff; return e },
		"payload":    func(e []byte) []byte { e[len(e)*2/3] ^= 0xff; return e },
		"cut":        func(e []byte) []byte { return fixCRC(resize(e[:len(e)-5], int8(e[16]))) },
		"zeros":      func(e []byte) []byte { return make([]byte, len(e)) },
	}
	for name, dm := range damages {
		for _, i := range []int{1, len(starts) / 2, len(starts) - 1} {
			end := len(seg)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			bad := append(append(bytes.Clone(seg[:starts[i]]), dm(bytes.Clone(seg[starts[i]:end]))...), seg[end:]...)
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				// The cuts of the undamaged segment, as a stale index gives.
				sameHeaders(t, bad, 0, cutSets(seg, 3), nil)
			})
		}
	}
	for cut := starts[len(starts)/2]; cut < starts[len(starts)/2+1]; cut += 41 {
		sameHeaders(t, seg[:cut], 0, cutSets(seg, 5), nil)
	}
}

// TestHeaderReaderSeekTo: after SeekTo, before reading or in the middle of
// the ranges, a HeaderReader reads on from there as a SegmentReader does
// (replicas resyncs past a batch failing Validate from its start).
func TestHeaderReaderSeekTo(t *testing.T) {
	for _, read := range []int{0, 1, 5} {
		h, cuts := rangePerBatch(t, 3)
		seg := deepSegment(t, 3)
		for range read {
			if !h.Next() {
				t.Fatal("no batch")
			}
		}
		to := cuts[len(cuts)/2]
		if read == 5 {
			to = cuts[2] // back, over batches read
		}
		h.SeekTo(to)
		plain := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
		plain.SeekTo(to)
		got, want := headerTrace(h, nil), headerTrace(plain, nil)
		h.Close()
		if got != want {
			t.Fatalf("after %d batches, SeekTo(%d):\n%s\nwant\n%s", read, to, got, want)
		}
	}
}

// TestHeaderViewHasNoRecords: a header view's records cannot be read.
func TestHeaderViewHasNoRecords(t *testing.T) {
	h, _ := rangePerBatch(t, 1)
	defer h.Close()
	var it RecordIter
	views := 0
	for h.Next() {
		b := h.Batch()
		if b.Size() == len(b.Data) {
			continue
		}
		views++
		if err := it.Reset(b); err == nil || !strings.Contains(err.Error(), "only its header") {
			t.Fatalf("Reset on a header view at %d: %v", b.Pos, err)
		}
	}
	if views == 0 {
		t.Fatal("no header views")
	}
}

// TestHeaderReaderCloseEarly stops reading in the middle, with every range
// in flight, many times: Close must return, leaving no goroutine blocked.
func TestHeaderReaderCloseEarly(t *testing.T) {
	smallRanges(t, 1<<20)
	seg := deepSegment(t, 2)
	cuts := cutSets(seg, 2)["all"]
	for n := range 40 {
		h := NewHeaderReader(bytes.NewReader(seg), int64(len(seg)), "seg", 0, slices.Values(cuts), 3)
		for i := 0; i < n && h.Next(); i++ {
		}
		h.Close()
	}
}

// TestHeaderReaderEmbeddedBatch cuts at a valid batch held in a record's
// value: a range starting there frames, but is not the log's, and must not
// be taken.
func TestHeaderReaderEmbeddedBatch(t *testing.T) {
	smallRanges(t, 1<<20)
	inner := encode(t, 2, 0, testRecords(rand.New(rand.NewPCG(1, 2)), 500, 3, 2))
	var seg []byte
	var cuts []int64
	for i := range 6 {
		recs := []Record{{Offset: int64(i), Value: append(bytes.Repeat([]byte{7}, 40), inner...)}}
		b := encode(t, 2, 0, recs)
		at := bytes.Index(b, inner)
		cuts = append(cuts, int64(len(seg)+at))
		seg = append(seg, b...)
	}
	sameHeaders(t, seg, 0, map[string][]int64{"embedded": cuts}, nil)
}

// zeroTail reads as data followed by zeros up to size, counting the bytes
// read.
type zeroTail struct {
	data []byte
	size int64
	read atomic.Int64
}

func (z *zeroTail) ReadAt(p []byte, off int64) (int, error) {
	if off >= z.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.size-off))
	clear(p[:n])
	if off < int64(len(z.data)) {
		copy(p[:n], z.data[off:])
	}
	z.read.Add(int64(n))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestHeaderReaderZeroTail: a log zeroed from some batch on (a crash, a
// preallocated file), with an index that may still point into the zeros.
// The zeros are scanned once, as a SegmentReader scans them: not again by
// the range that meets them, nor by each range in flight that starts in
// them.
func TestHeaderReaderZeroTail(t *testing.T) {
	smallRanges(t, 1<<20)
	seg := deepSegment(t, 4)
	const tail = 16 << 20
	for _, stale := range []bool{false, true} {
		cuts := cutSets(seg, 4)["all"]
		for c := int64(len(seg)); stale && c < int64(len(seg))+tail; c += 64 << 10 {
			cuts = append(cuts, c)
		}
		z := &zeroTail{data: seg, size: int64(len(seg)) + tail}
		h := NewHeaderReader(z, z.size, "seg", 0, slices.Values(cuts), 3)
		got := headerTrace(h, nil)
		h.Close()
		plain := NewSegmentReader(&zeroTail{data: seg, size: z.size}, z.size, "seg")
		if want := headerTrace(plain, nil); got != want {
			t.Fatal(firstDiff(got, want))
		}
		if r := z.read.Load(); r > 2*int64(len(seg))+tail+tail/4 {
			t.Errorf("stale cuts %v: %d bytes read for a file of %d", stale, r, z.size)
		}
	}
}

// countingReader counts the bytes read at or after from.
type countingReader struct {
	r    io.ReaderAt
	from int64
	n    atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	if end := off + int64(n); end > c.from {
		c.n.Add(end - max(off, c.from))
	}
	return n, err
}

// gatedReader holds reads at or after from until open is closed, saying
// so on blocked, and counts the bytes read once it is open.
type gatedReader struct {
	countingReader
	open    chan struct{}
	blocked chan struct{}
	once    sync.Once
}

func (g *gatedReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > g.from {
		g.once.Do(func() { close(g.blocked) })
		<-g.open
		return g.countingReader.ReadAt(p, off)
	}
	return g.r.ReadAt(p, off)
}

// TestHeaderReaderCloseStopsRanges: once the reader is done with the
// ranges, Close must not wait for the rest of one nobody will use: a scan
// that stops at a corrupt batch near the start of a segment would
// otherwise read on to its end (here 8 MiB of batches after the last cut).
func TestHeaderReaderCloseStopsRanges(t *testing.T) {
	smallRanges(t, 1<<20)
	data := deepSegment(t, 4)
	starts := batchStarts(data)
	seg := bytes.Clone(data)
	for len(seg) < len(data)+8<<20 {
		seg = append(seg, data...)
	}
	g := &gatedReader{countingReader: countingReader{r: bytes.NewReader(seg), from: int64(len(data)) + 1<<20},
		open: make(chan struct{}), blocked: make(chan struct{})}
	h := NewHeaderReader(g, int64(len(seg)), "seg", 0, slices.Values([]int64{int64(starts[len(starts)/2])}), 2)
	if !h.Next() {
		t.Fatal(h.Err())
	}
	quit := h.quit
	<-g.blocked // the second range reads on
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	<-quit
	close(g.open)
	<-closed
	if n := g.n.Load(); n > 1<<20 {
		t.Errorf("read %d bytes of a range after Close", n)
	}
}

// FuzzHeaderReader reads arbitrary bytes, and the segments they are
// appended to, in ranges cut at arbitrary positions (two bytes each),
// against one SegmentReader.
func FuzzHeaderReader(f *testing.F) {
	seeds := fuzzSeeds()
	all := bytes.Join(seeds, nil)
	var cuts []byte
	for _, s := range batchStarts(all) {
		cuts = append(cuts, byte(s>>8), byte(s))
	}
	f.Add(all, cuts, uint8(2), uint8(0))
	f.Add(all, cuts, uint8(3), uint8(2))
	f.Add(all, []byte{0, 40, 1, 0, 3, 7}, uint8(4), uint8(1))
	for _, s := range seeds {
		f.Add(s, []byte{0, 30, 0, 90}, uint8(2), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data, cutBytes []byte, workers, infos uint8) {
		smallRanges(t, 1+int(infos%8))
		headersKeepBytes = 200
		keep := func(b *Batch) bool { return b.Pos%3 == 0 }
		var cuts []int64
		for i := 0; i+1 < len(cutBytes); i += 2 {
			cuts = append(cuts, int64(cutBytes[i])<<8|int64(cutBytes[i+1]))
		}
		sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg")
		sr.MaxBatchSize = 1 << 20
		want := headerTrace(sr, keep)
		h := NewHeaderReader(bytes.NewReader(data), int64(len(data)), "seg", 0, slices.Values(cuts), 2+int(workers%5))
		h.MaxBatchSize, h.Keep = 1<<20, keep
		got := headerTrace(h, keep)
		h.Close()
		if got != want {
			t.Fatalf("differs from one reader:\n%s", firstDiff(got, want))
		}
		// Rendered, but for the entries whose position is a multiple of 7.
		sr = NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg")
		sr.MaxBatchSize = 1 << 20
		want = headerTrace(sr, nil)
		h = NewHeaderReader(bytes.NewReader(data), int64(len(data)), "seg", 0, slices.Values(cuts), 2+int(workers%5))
		h.MaxBatchSize = 1 << 20
		got = renderTrace(t, h, func(e *Batch) bool { return e.Pos%7 == 0 && e.Pos > 0 })
		h.Close()
		if got != want {
			t.Fatalf("rendered, differs from one reader:\n%s", firstDiff(got, want))
		}
	})
}

// TestHeaderReaderLegacyViews: a magic 0 or 1 entry over checkedBeforeHeld
// is a header view too, checksummed a window at a time, with the fields a
// header reader's callers read (offsets, size, checksum, timestamp), and
// its records cannot be read; it was read whole, so that verify held a
// legacy wrapper of a decompression bomb twice (its pass and reindex's),
// over the memory goal.
func TestHeaderReaderLegacyViews(t *testing.T) {
	value := bytes.Repeat([]byte{7}, checkedBeforeHeld+1)
	for _, magic := range []int8{0, 1} {
		seg := AppendLegacyMessage(nil, magic, 41, 0, 1_700_000_000_123, []byte("k"), value)
		seg = AppendLegacyMessage(seg, magic, 42, 0, 1_700_000_000_456, []byte("k"), []byte("small"))
		h := NewHeaderReader(bytes.NewReader(seg), int64(len(seg)), "seg", 0, nil, 1)
		var got []string
		for h.Next() {
			b := h.Batch()
			if err := b.Validate(); err != nil {
				t.Fatalf("magic %d: %v", magic, err)
			}
			got = append(got, fmt.Sprintf("%d %d %d %d", b.LastOffset(), b.MaxTimestamp(), b.Size(), len(b.Data)))
		}
		h.Close()
		ts := func(v int64) int64 {
			if magic == 0 {
				return NoTimestamp
			}
			return v
		}
		first := len(seg) - len(AppendLegacyMessage(nil, magic, 42, 0, 1_700_000_000_456, []byte("k"), []byte("small")))
		want := []string{
			fmt.Sprintf("41 %d %d %d", ts(1_700_000_000_123), first, LogOverhead+LegacyMessage(nil).minSizeOf(magic)),
			fmt.Sprintf("42 %d %d %d", ts(1_700_000_000_456), len(seg)-first, len(seg)-first),
		}
		if !slices.Equal(got, want) {
			t.Errorf("magic %d: batches (last offset, max timestamp, size, bytes held)\n%v\nwant\n%v", magic, got, want)
		}
		// A damaged byte past the view is found by the checksum all the same.
		seg[len(seg)/3] ^= 1
		h = NewHeaderReader(bytes.NewReader(seg), int64(len(seg)), "seg", 0, nil, 1)
		if h.Next() || h.Err() == nil {
			t.Errorf("magic %d: a damaged large entry is not refused", magic)
		}
		h.Close()
	}
}
