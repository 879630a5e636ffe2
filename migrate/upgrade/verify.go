package upgrade

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
)

// upgradeVerifier checks a rewritten segment against its original, record
// by record: same offsets, keys, values and headers, and the timestamp and
// type that the rules give each original record. The rewritten segment must
// also be what recovery accepts to its end: valid checksums, every entry at
// the target magic or above, offsets within the segment. While reading it,
// it replays the segment as LogSegment.recover does (the rule
// index.Recovery follows) to get the index entries to write.
//
// It reads the new segment in pieces that each end on an entry boundary,
// so that it can follow the writer: check can run while the file is still
// being written, on the part already written.
//
// A new batch larger than upgradeOneSideBytes is compared with the
// original one side at a time (recordsOneSide), so that the verifier
// holds one large entry, not the new one and its original.
//
// A difference is an error wrapping ErrVerify; corruption of the
// original that only a deep read finds (inside entries copied unchanged)
// is its *logfmt.CorruptError.
type upgradeVerifier struct {
	rules *upgradeRules
	orig  *upgradeCursor
	conv  io.ReaderAt
	name  string // of the new segment, in errors
	base  int64
	rec   *index.Recovery
	done  int64 // bytes of the new segment checked
	// job, when set, holds the large entries read against the budget the
	// converter shares (upgrader.segment).
	job  *logfmt.Job
	hash maphash.Hash // recordsOneSide's, one seed for both sides
}

func newUpgradeVerifier(rules *upgradeRules, orig io.ReaderAt, origSize int64, origName string, conv io.ReaderAt, convName string, base int64, rec *index.Recovery) *upgradeVerifier {
	// The original was checked batch by batch by the conversion that read
	// it; here only its records matter.
	return &upgradeVerifier{rules: rules, orig: newUpgradeCursor(orig, origSize, origName, false, rules.maxRecord, 1), conv: conv, name: convName,
		base: base, rec: rec}
}

// setJob has the verifier's readers hold large entries against job.
func (v *upgradeVerifier) setJob(job *logfmt.Job) {
	v.job, v.orig.sr.Job = job, job
}

func (v *upgradeVerifier) fail(pos int64, format string, args ...any) error {
	at := ""
	if pos >= 0 {
		at = fmt.Sprintf(" (at byte %d)", pos)
	}
	return fmt.Errorf("%s: %w: %s%s", v.name, ErrVerify, fmt.Sprintf(format, args...), at)
}

// check verifies the new segment up to end, an entry boundary.
func (v *upgradeVerifier) check(end int64) error {
	start := v.done
	n := newUpgradeCursor(io.NewSectionReader(v.conv, start, end-start), end-start, v.name, false, v.rules.maxRecord, 1)
	n.sr.Job = v.job
	for {
		ok, err := n.nextBatch()
		if err != nil {
			return v.fail(-1, "%v", logfmt.WithFile(err, "", start))
		}
		if !ok {
			break
		}
		b := n.b
		pos := start + b.Pos
		if err := b.Validate(); err != nil {
			return v.fail(pos, "%v", err)
		}
		if b.Magic() < v.rules.toMagic {
			return v.fail(pos, "entry has magic %d, below the target %d", b.Magic(), v.rules.toMagic)
		}
		last := b.LastOffset()
		if d := last - v.base; d < 0 || d > 1<<31-1 {
			return v.fail(pos, "offset %d does not fit the segment based at %d", last, v.base)
		}
		v.rec.Add(last, b.MaxTimestamp(), b.Size())
		compare := v.records
		if b.Size() > upgradeOneSideBytes {
			compare = v.recordsOneSide
		}
		if err := compare(n, pos); err != nil {
			return err
		}
	}
	if e := n.seg.End(); e != logfmt.EndClean {
		return v.fail(start+n.seg.Pos(), "rewritten segment does not frame: %s", n.seg.EndDetail())
	}
	v.done = end
	return nil
}

// records compares the records of the new batch at pos with the next ones
// of the original.
func (v *upgradeVerifier) records(n *upgradeCursor, pos int64) error {
	if err := n.records(); err != nil {
		return v.unreadable(pos, err)
	}
	for {
		nr, err := n.nextRecord()
		if err != nil {
			return v.unreadable(pos, err)
		}
		if nr == nil {
			return nil
		}
		or, err := v.orig.next()
		if err != nil {
			return err
		}
		if or == nil {
			return v.fail(pos, "record at offset %d is not in the original %s", nr.Offset, v.orig.file)
		}
		if diff := upgradeDiff(v.rules, or, nr); diff != "" {
			return v.fail(pos, "record at offset %d: %s (original %s at byte %d)", or.Offset, diff, v.orig.file, v.orig.b.Pos)
		}
	}
}

// unreadable is the error for the new batch at pos whose records do not
// read: an entry copied unchanged can be as broken inside as the original
// was, and then the original's error is the one to report.
func (v *upgradeVerifier) unreadable(pos int64, err error) error {
	if _, oerr := v.orig.next(); oerr != nil {
		return oerr
	}
	return v.fail(pos, "%v", err)
}

// upgradeOneSideBytes is the size of a new batch above which the verifier
// reads it and its original one after the other (recordsOneSide): that of
// the entries a reader keeps its buffer for, which Kafka's default batch
// size stays well within.
const upgradeOneSideBytes = 2 << 20

// recordsOneSide is records for a large new batch, whose original entry is
// as large: both held at once would make the verifier's memory twice the
// largest entry (a snappy bomb stores 26 MiB). It digests the new batch's
// records (offset, timestamp and type, key, value and headers, in order),
// gives the batch's buffers back, then digests as many records of the
// original, each with the timestamp and type the rules give it, and
// compares the two: a difference the keyed 64-bit digest misses has a
// chance of 2^-64. A difference is told by the offsets of the batch, not of
// the record.
func (v *upgradeVerifier) recordsOneSide(n *upgradeCursor, pos int64) error {
	if err := n.records(); err != nil {
		return v.unreadable(pos, err)
	}
	v.hash.Reset()
	var count, first, last int64
	for {
		nr, err := n.nextRecord()
		if err != nil {
			return v.unreadable(pos, err)
		}
		if nr == nil {
			break
		}
		if count == 0 {
			first = nr.Offset
		}
		count, last = count+1, nr.Offset
		upgradeDigest(&v.hash, nr, nr.Timestamp, nr.TimestampType)
	}
	sum := v.hash.Sum64()
	n.release()
	v.hash.Reset()
	for i := range count {
		or, err := v.orig.next()
		if err != nil {
			return err
		}
		if or == nil {
			return v.fail(pos, "records at offsets %d to %d: the last %d are not in the original %s", first, last, count-i, v.orig.file)
		}
		ts, typ := v.rules.stamp(or)
		upgradeDigest(&v.hash, or, ts, typ)
	}
	if v.hash.Sum64() != sum {
		return v.fail(pos, "records at offsets %d to %d differ from the original's in %s (their digests differ)", first, last, v.orig.file)
	}
	return nil
}

// upgradeDigest adds to h what the verifier compares of a record, each
// field's length before it and null told from empty, so that no two
// different records write the same bytes.
func upgradeDigest(h *maphash.Hash, r *logfmt.Record, ts int64, typ logfmt.TimestampType) {
	var b [17]byte
	binary.LittleEndian.PutUint64(b[:], uint64(r.Offset))
	binary.LittleEndian.PutUint64(b[8:], uint64(ts))
	b[16] = byte(typ)
	h.Write(b[:])
	upgradeDigestBytes(h, r.Key)
	upgradeDigestBytes(h, r.Value)
	binary.LittleEndian.PutUint64(b[:], uint64(len(r.Headers)))
	h.Write(b[:8])
	for _, hd := range r.Headers {
		upgradeDigestBytes(h, hd.Key)
		upgradeDigestBytes(h, hd.Value)
	}
}

func upgradeDigestBytes(h *maphash.Hash, p []byte) {
	var b [9]byte
	if p != nil {
		b[0] = 1
	}
	binary.LittleEndian.PutUint64(b[1:], uint64(len(p)))
	h.Write(b[:])
	h.Write(p)
}

// finish checks that no record of the original is left over and returns
// the index entries.
func (v *upgradeVerifier) finish() (*index.Recovery, error) {
	or, err := v.orig.next()
	if err != nil {
		return nil, err
	}
	if or != nil {
		return nil, v.fail(v.done, "record at offset %d of the original %s is missing", or.Offset, v.orig.file)
	}
	v.rec.Finish()
	return v.rec, nil
}

// upgradeDiff describes how a rewritten record differs from its original,
// "" when it does not.
func upgradeDiff(rules *upgradeRules, o, n *logfmt.Record) string {
	if o.Offset != n.Offset {
		return fmt.Sprintf("offset %d instead of %d", n.Offset, o.Offset)
	}
	if !upgradeSameBytes(o.Key, n.Key) {
		return "key differs"
	}
	if !upgradeSameBytes(o.Value, n.Value) {
		return "value differs"
	}
	if len(o.Headers) != len(n.Headers) {
		return fmt.Sprintf("%d headers instead of %d", len(n.Headers), len(o.Headers))
	}
	for i := range o.Headers {
		if !upgradeSameBytes(o.Headers[i].Key, n.Headers[i].Key) || !upgradeSameBytes(o.Headers[i].Value, n.Headers[i].Value) {
			return fmt.Sprintf("header %d differs", i)
		}
	}
	if ts, typ := rules.stamp(o); n.Timestamp != ts || n.TimestampType != typ {
		return fmt.Sprintf("timestamp %d (%v) instead of %d (%v)", n.Timestamp, n.TimestampType, ts, typ)
	}
	return ""
}

// upgradeVerifyChunk is how much new data the background verifier waits
// for before it reads: large reads, and few readers to set up.
const upgradeVerifyChunk = 8 << 20

// upgradeFollower runs an upgradeVerifier alongside the writer of the new
// segment, so that reading back costs little extra time on a machine with
// a second core. The writer reports each entry boundary it has written;
// the verifier reads up to the latest one once enough is there, and to the
// end when the writer is done. The writer never waits for it: the verifier
// may wait for the converter to give back a large entry.
type upgradeFollower struct {
	v       *upgradeVerifier
	written chan int64
	result  chan error
	failed  chan struct{} // closed when verification has failed
	closed  bool
	err     error
}

func newUpgradeFollower(v *upgradeVerifier) *upgradeFollower {
	f := &upgradeFollower{v: v, written: make(chan int64, 1), result: make(chan error, 1), failed: make(chan struct{})}
	go f.run()
	return f
}

func (f *upgradeFollower) run() {
	var err error
	var target int64
	for end := range f.written {
		target = end
		if err != nil || target-f.v.done < upgradeVerifyChunk {
			continue // after a failure, drain so that the writer never blocks
		}
		if err = f.v.check(target); err != nil {
			close(f.failed)
		}
	}
	if err == nil && target > f.v.done {
		err = f.v.check(target)
	}
	f.result <- err
}

// wrote tells the verifier that the new segment is complete up to end, an
// entry boundary. It returns the verification error as soon as there is
// one, so that the writer can stop.
func (f *upgradeFollower) wrote(end int64) error {
	for {
		select {
		case <-f.failed:
			return f.wait()
		case f.written <- end:
			return nil
		default:
			// An earlier boundary not taken yet: this one, further on,
			// replaces it.
			select {
			case <-f.written:
			default:
			}
		}
	}
}

// wait tells the verifier that writing has ended and returns its result.
// The verifier is then done with the files.
func (f *upgradeFollower) wait() error {
	if !f.closed {
		f.closed = true
		close(f.written)
		f.err = <-f.result
	}
	return f.err
}
