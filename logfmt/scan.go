package logfmt

// Scan reads the batches of a segment whose frame and checksum hold and
// steps over the damage between them: after an entry whose frame or
// checksum fails, or that ends the data torn, it resumes at the next
// position where an entry frames with a checksum that holds (Resync). It
// is the one rule by which salvage keeps what follows damage and verify
// reports each damaged range of a segment, not only the first.
type Scan struct {
	src       ScanSource
	size      int64
	batch     *Batch
	damage    *Damage // skipped just before batch, or at the end
	refused   bool    // the caller refused batch: resync from inside it
	refusedAt int64
	err       error
	finished  bool
}

// ScanSource is what a Scan reads: a SegmentReader, or a DeepReader to
// have the checksums computed ahead on workers.
type ScanSource interface {
	Next() bool
	Batch() *Batch
	Pos() int64
	Err() error
	End() End
	EndDetail() string
	SeekTo(pos int64)
	Resync() bool
}

// Damage is a byte range of a segment that holds no entry whose frame and
// checksum hold.
type Damage struct {
	From, To int64 // the bytes skipped: [From, To)
	// How tells how the range began: EndTorn for an entry that declares
	// more bytes than remain, EndZeroTail for zeros from From to the end,
	// EndNone for corruption (Err) or a batch the caller refused.
	How End
	// Err is the *CorruptError at From, when How is EndNone and the caller
	// did not refuse the batch there.
	Err error
	// Detail says why the bytes at From were refused; for a refused batch
	// it is empty, as the caller knows why.
	Detail string
	// Checksum tells that an entry frames at From and its checksum does
	// not hold.
	Checksum bool
}

// Resumes tells whether sound batches follow the range.
func (d *Damage) Resumes(size int64) bool { return d.To < size }

// NewScan scans src, whose data is size bytes long, from its position.
func NewScan(src ScanSource, size int64) *Scan {
	return &Scan{src: src, size: size}
}

// Next moves to the next batch whose frame and checksum hold. It returns
// false at the end of the data or on an I/O error (Err); Skipped then
// tells what ended the data, if not a clean end.
func (s *Scan) Next() bool {
	s.damage, s.batch = nil, nil
	if s.finished {
		return false
	}
	if s.refused {
		s.refused = false
		s.open(s.refusedAt, EndNone, nil, "")
		if !s.resync(s.refusedAt) {
			return false
		}
	}
	for {
		if !s.src.Next() {
			if !s.stopped() {
				return false
			}
			continue
		}
		b := s.src.Batch()
		if err := b.Validate(); err != nil {
			ce, _ := AsCorrupt(err)
			s.open(b.Pos, EndNone, err, ce.Msg+errSuffix(ce.Err))
			if s.damage.From == b.Pos {
				s.damage.Checksum = b.StoredCRC() != b.ComputeCRC()
			}
			if !s.resync(b.Pos) {
				return false
			}
			continue
		}
		s.batch = b
		return true
	}
}

// stopped handles the source stopping short of a batch; true when a sound
// batch follows.
func (s *Scan) stopped() bool {
	pos := s.src.Pos()
	if err := s.src.Err(); err != nil {
		ce, ok := AsCorrupt(err)
		if !ok {
			s.err, s.finished = err, true
			return false
		}
		s.open(pos, EndNone, err, ce.Msg+errSuffix(ce.Err))
		return s.resync(pos)
	}
	switch s.src.End() {
	case EndTorn:
		s.open(pos, EndTorn, nil, s.src.EndDetail())
		return s.resync(pos)
	case EndZeroTail:
		s.open(pos, EndZeroTail, nil, s.src.EndDetail())
		s.damage.To = s.size
	}
	s.finished = true
	return false
}

// open starts a damaged range at pos, unless one is open already: the
// range is named by its first cause.
func (s *Scan) open(pos int64, how End, err error, detail string) {
	if s.damage == nil {
		s.damage = &Damage{From: pos, How: how, Err: err, Detail: detail}
	}
}

// resync moves from the entry at pos, which is not sound, to the next
// sound one, and ends the open range there; false when none follows.
func (s *Scan) resync(pos int64) bool {
	s.src.SeekTo(pos)
	ok := s.src.Resync()
	s.damage.To = s.src.Pos()
	if !ok {
		s.finished = true
		s.damage.To = s.size
		// An I/O error leaves the range's end unknown: the error says
		// what happened, not a range.
		if s.err = s.src.Err(); s.err != nil {
			s.damage = nil
		}
	}
	return ok
}

// Batch is the current batch, valid until the next call to Next.
func (s *Scan) Batch() *Batch { return s.batch }

// Skipped is the damage skipped before the current batch, or, once Next has
// returned false, before the end of the data; nil when there was none.
func (s *Scan) Skipped() *Damage { return s.damage }

// Refuse tells that the current batch, whose checksum holds, is not sound
// all the same (its content or its offsets): the next Next looks for a
// sound entry from inside it, and reports the range from its start.
func (s *Scan) Refuse() { s.refused, s.refusedAt = true, s.batch.Pos }

// Err is the I/O error that stopped the scan, nil at the end of the data.
func (s *Scan) Err() error { return s.err }

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}
