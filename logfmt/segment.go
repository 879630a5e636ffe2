package logfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/logtool/logtool/internal/crc32c"
	"github.com/logtool/logtool/internal/freelist"
	"github.com/logtool/logtool/internal/safefile"
)

// End tells how a segment's data stopped.
type End int

const (
	EndNone     End = iota // iteration has not reached the end (or stopped on an error)
	EndClean               // the last entry ended exactly at the end of the file
	EndZeroTail            // zero bytes follow the last entry: a preallocated or crash-zeroed tail
	EndTorn                // a last entry that does not fit in the file: a write cut short
)

func (e End) String() string {
	switch e {
	case EndClean:
		return "clean"
	case EndZeroTail:
		return "zero-filled tail"
	case EndTorn:
		return "torn last entry"
	}
	return "none"
}

const (
	// DefaultMaxBatchSize bounds the memory one entry may take. Kafka itself
	// only bounds it by the file size, but brokers refuse batches this large
	// long before (message.max.bytes); a larger declared size is corruption.
	DefaultMaxBatchSize = 128 << 20
	// windowSize is a plain reader's window: one that fits a core's cache,
	// into which the kernel copies the page cache faster and from which the
	// reader then reads (as aheadChunkSize; figures in docs/performance.md).
	windowSize = 256 << 10
)

// spare holds buffers of entries larger than a read window, and of the
// large records decompressed from them (RecordIter). A command reads a
// segment several times, each with a reader of its own, and one large
// batch after another; the readers take turns with two such buffers (an
// entry's and its record's) rather than each leave one to the garbage
// collector, which for a batch of tens of MiB made up most of a command's
// memory. (A sync.Pool would lose them at every collection.) The largest
// ones given back are kept.
var spare struct {
	sync.Mutex
	b [2][]byte
}

// windows holds read windows given back, for the next readers: a command
// that reads a partition in many units, each with a reader of its own,
// would otherwise have the kernel fault a fresh window in for every unit.
// It keeps one for each of the readers a command runs at once, on most
// machines.
var windows = freelist.List[[]byte]{Max: 16}

// getLarge returns a buffer of n bytes.
func getLarge(n int) []byte {
	if n == windowSize {
		if b, ok := windows.Get(); ok {
			return b
		}
	}
	if n > windowSize {
		spare.Lock()
		// The smaller of the two that holds n.
		i := 0
		if cap(spare.b[1]) >= n && (cap(spare.b[0]) < n || cap(spare.b[1]) < cap(spare.b[0])) {
			i = 1
		}
		b := spare.b[i]
		// A window or entry a reader keeps does not take a buffer it
		// would not keep: that one is a large entry's or record's, which
		// would then be allocated again while this one holds it.
		fits := cap(b) >= n && (n > keptLarge || cap(b) <= keptLarge)
		if fits {
			spare.b[i] = nil
		}
		spare.Unlock()
		if fits {
			return b[:n]
		}
	}
	if n > keptLarge {
		// Rounded up past a read-ahead join of the same entry (n plus a
		// chunk), so that the buffers of one large entry, its join and
		// its records serve one another.
		return make([]byte, n, (n+aheadChunkSize)|(1<<20-1)+1)
	}
	return make([]byte, n)
}

// putLarge gives b, which nothing may use any more, to the next getLarge.
func putLarge(b []byte) {
	if cap(b) == windowSize {
		windows.Put(b[:windowSize])
		return
	}
	if cap(b) < windowSize {
		return
	}
	spare.Lock()
	// In place of the smaller of the two, if b is larger.
	i := 0
	if cap(spare.b[1]) < cap(spare.b[0]) {
		i = 1
	}
	if cap(b) > cap(spare.b[i]) {
		spare.b[i] = b
	}
	spare.Unlock()
}

// keptLarge is the largest buffer a reader keeps for the entries that
// follow the one it was made for (Kafka bounds batches to 1 MiB by
// default). A larger one is held against the reader's job (Job) and goes
// back once its entry is read, so that a job holds no more than the entry
// it reads.
const keptLarge = 2 << 20

// getLarge is getLarge for the reader's job: a buffer larger than
// keptLarge is held against the job's budget, taken before it is allocated.
func (s *SegmentReader) getLarge(n int) []byte {
	if n <= keptLarge {
		return getLarge(n)
	}
	s.Job.acquire(int64(n))
	b := getLarge(n)
	s.Job.acquire(int64(cap(b) - n)) // the job holds: no wait
	return b
}

// putLarge is putLarge for the reader's job.
func (s *SegmentReader) putLarge(b []byte) {
	if cap(b) > keptLarge {
		s.Job.release(int64(cap(b)))
	}
	putLarge(b)
}

// SegmentReader streams the shallow entries of a segment (any magic) with
// their byte positions, holding at most one read window and one entry in
// memory. It checks framing only; callers decide whether to check CRCs
// (Batch.Validate) because dump wants to show bad ones and recovery stops at
// them.
type SegmentReader struct {
	// MaxBatchSize bounds one entry; 0 means DefaultMaxBatchSize.
	MaxBatchSize int
	// Job, when set, is the job of the command that the reader reads for:
	// an entry larger than keptLarge is held against its budget.
	Job *Job
	// HeaderViews, when set, has a magic-2 entry larger than
	// checkedBeforeHeld given as a header view (see HeaderReader), its
	// checksum computed a window at a time, unless HeaderViews says of the
	// view that the caller wants the entry whole: for callers that read
	// headers, so that a large entry is never held.
	HeaderViews func(view *Batch) (whole bool)
	// LegacyViews has HeaderViews take large magic 0 and 1 entries too:
	// the view is the message's fixed fields (offset to value length),
	// for callers that read no legacy record, whose wrapper's records
	// cannot then be read.
	LegacyViews bool

	r      io.ReaderAt
	size   int64
	file   string
	pos    int64
	buf    []byte
	bufPos int64
	batch  Batch
	view   decoded // the current batch's, when a header view
	err    error
	end    End
	endMsg string

	// unchecked ends reading at a zero size field without checking that
	// zeros run to the end: a HeaderReader range's reader, whose stop there
	// is handed to a reader that checks.
	unchecked bool

	// Read-ahead state (readahead.go).
	ahead bool // ReadAheadWindows
	ra    *readAhead
	chunk []byte // the read-ahead buffer that holds buf, if any
	join  []byte // holds buf when an entry straddled buffers
	// aheadSizes, when set, replaces aheadRoom and windowSize as the room
	// and data length of a read-ahead buffer, so tests can make entries
	// straddle buffers in every way.
	aheadSizes [2]int
}

// WindowSource is where a SegmentReader gets the bytes it frames from.
type WindowSource int

const (
	// PlainWindows reads each window into a buffer when it is needed.
	PlainWindows WindowSource = iota
	// ReadAheadWindows reads the windows that follow on a goroutine of its
	// own (readahead.go). It suits a scan from start to end; Close must be
	// called.
	ReadAheadWindows
)

// NewSegmentReader reads size bytes of r; file names it in errors. src,
// when given, says where the windows come from: PlainWindows by default.
func NewSegmentReader(r io.ReaderAt, size int64, file string, src ...WindowSource) *SegmentReader {
	s := &SegmentReader{r: r, size: size, file: file}
	for _, w := range src {
		s.ahead = w == ReadAheadWindows
	}
	return s
}

// SegmentFile is a SegmentReader over an open file.
type SegmentFile struct {
	*SegmentReader
	f *os.File
}

// OpenSegment opens a segment file for streaming, with windows from src
// (see NewSegmentReader).
func OpenSegment(path string, src ...WindowSource) (*SegmentFile, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &SegmentFile{SegmentReader: NewSegmentReader(f, st.Size(), path, src...), f: f}, nil
}

// Close stops any read-ahead and closes the file.
func (s *SegmentFile) Close() error {
	s.SegmentReader.Close()
	return s.f.Close()
}

// File is the name given to the reader.
func (s *SegmentReader) File() string { return s.file }

// Size is the length of the data read.
func (s *SegmentReader) Size() int64 { return s.size }

// Pos is the position of the next entry to read.
func (s *SegmentReader) Pos() int64 { return s.pos }

// Batch is the current entry, valid until the next call to Next.
func (s *SegmentReader) Batch() *Batch { return &s.batch }

// Err is the corruption (a *CorruptError) or I/O error that stopped
// iteration; nil at any of the three ends.
func (s *SegmentReader) Err() error { return s.err }

// End tells how iteration ended; EndDetail explains a torn or zeroed end.
func (s *SegmentReader) End() End          { return s.end }
func (s *SegmentReader) EndDetail() string { return s.endMsg }

// SeekTo makes the next Next read the entry at pos (an index entry's position).
func (s *SegmentReader) SeekTo(pos int64) {
	s.pos, s.err, s.end, s.endMsg = pos, nil, EndNone, ""
}

func (s *SegmentReader) maxBatch() int64 {
	if s.MaxBatchSize > 0 {
		return int64(s.MaxBatchSize)
	}
	return DefaultMaxBatchSize
}

// window returns n bytes at pos from the read window, refilling it when
// needed. Callers have checked that pos+n lies within the file.
func (s *SegmentReader) window(pos int64, n int) ([]byte, error) {
	if pos >= s.bufPos && pos+int64(n) <= s.bufPos+int64(len(s.buf)) {
		off := int(pos - s.bufPos)
		return s.buf[off : off+n], nil
	}
	if s.ahead {
		return s.fetch(pos, n)
	}
	want := max(n, windowSize)
	if rest := s.size - pos; int64(want) > rest {
		want = int(rest)
	}
	if cap(s.buf) < want || cap(s.buf) > keptLarge && want <= windowSize {
		// Room for a whole window even at the end of the data, so that
		// the buffer can serve the next reader (getLarge).
		old := s.buf
		s.buf = s.getLarge(max(n, windowSize))
		s.putLarge(old)
	}
	s.buf = s.buf[:want]
	got, err := s.r.ReadAt(s.buf, pos)
	if got < n {
		s.buf, s.bufPos = s.buf[:0], 0
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%s: read %d bytes at %d: %w", s.file, n, pos, err)
	}
	s.buf, s.bufPos = s.buf[:got], pos
	return s.buf[:n], nil
}

// Next reads the next entry. It returns false at the end of the data or on
// an error; then End and Err tell which.
func (s *SegmentReader) Next() bool {
	if s.err != nil || s.end != EndNone {
		return false
	}
	b, end, err := s.frame(s.pos)
	if err != nil {
		s.err = err
		return false
	}
	if end != EndNone {
		s.end = end
		return false
	}
	s.batch = Batch{Pos: s.pos, Data: b}
	if s.view.size > 0 {
		s.batch.dec = &s.view
	}
	s.pos += int64(s.batch.Size())
	return true
}

// frame reads and frames the entry at pos.
func (s *SegmentReader) frame(pos int64) ([]byte, End, error) {
	s.view = decoded{}
	rest := s.size - pos
	if rest <= 0 {
		return nil, EndClean, nil
	}
	if rest < HeaderSizeUpToMagic {
		return s.tail(pos, fmt.Sprintf("%d bytes at the end are too few for an entry header", rest))
	}
	h, err := s.window(pos, HeaderSizeUpToMagic)
	if err != nil {
		return nil, EndNone, err
	}
	size := int32(binary.BigEndian.Uint32(h[8:]))
	magic := int8(h[MagicOffset])
	if size < legacyMinSize {
		if size == 0 && s.unchecked {
			return nil, EndZeroTail, nil
		}
		if size == 0 {
			if zero, err := s.allZero(pos); err != nil || zero {
				if err != nil {
					return nil, EndNone, err
				}
				s.endMsg = fmt.Sprintf("%d zero bytes from byte %d to the end", rest, pos)
				return nil, EndZeroTail, nil
			}
		}
		return nil, EndNone, Corruptf(s.file, pos, "entry size %d is below the minimum %d", size, legacyMinSize)
	}
	if magic < 0 || magic > 2 {
		return nil, EndNone, Corruptf(s.file, pos+MagicOffset, "unknown magic %d", magic)
	}
	total := int64(size) + LogOverhead
	if total > rest {
		s.endMsg = fmt.Sprintf("entry at byte %d declares %d bytes but only %d remain", pos, total, rest)
		return nil, EndTorn, nil
	}
	if magic == 2 && total < V2HeaderSize {
		return nil, EndNone, Corruptf(s.file, pos+8, "record batch size %d is below the %d-byte header", total, V2HeaderSize)
	}
	if total > s.maxBatch() {
		return nil, EndNone, Corruptf(s.file, pos+8, "entry size %d exceeds the %d-byte limit", total, s.maxBatch())
	}
	if total > checkedBeforeHeld {
		crc, err := s.checkCRC(pos, total, magic)
		if err != nil {
			return nil, EndNone, err
		}
		if s.HeaderViews != nil && (magic == 2 || s.LegacyViews) {
			n := V2HeaderSize
			if magic < 2 {
				n = LogOverhead + LegacyMessage(nil).minSizeOf(magic)
			}
			h, err := s.window(pos, n)
			if err != nil {
				return nil, EndNone, err
			}
			s.view = decoded{crc: crc, size: int(total)}
			if !s.HeaderViews(&Batch{Pos: pos, Data: h, dec: &s.view}) {
				return h, EndNone, nil
			}
			s.view = decoded{}
		}
	}
	b, err := s.window(pos, int(total))
	return b, EndNone, err
}

// checkedBeforeHeld is the size above which an entry's checksum is computed
// a window at a time before the entry is read whole, so that a length that
// garbage or a sparse file declares costs a window of memory rather than
// the length. Brokers refuse entries this large by default
// (message.max.bytes is 1 MiB), so the second read is rare.
const checkedBeforeHeld = 8 << 20

// checkCRC computes the checksum of the entry of total bytes at pos, as
// Batch.Validate does, a window at a time, and refuses the entry when it
// does not match.
func (s *SegmentReader) checkCRC(pos, total int64, magic int8) (uint32, error) {
	// v2: CRC-32C at byte 17 over attributes..end; legacy: CRC-32 at byte
	// 12 over magic..end.
	at, from, update := int64(17), int64(21), crc32c.Update
	if magic < 2 {
		at, from, update = 12, MagicOffset, func(crc uint32, p []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, p) }
	}
	h, err := s.window(pos+at, 4)
	if err != nil {
		return 0, err
	}
	stored := binary.BigEndian.Uint32(h)
	var sum uint32
	for p, end := pos+from, pos+total; p < end; {
		n := int(min(int64(windowSize), end-p))
		b, err := s.window(p, n)
		if err != nil {
			return 0, err
		}
		sum = update(sum, b)
		p += int64(n)
	}
	if sum != stored {
		return 0, Corruptf(s.file, pos, "checksum mismatch: stored %d, computed %d, over an entry of %d bytes, which is not read whole", stored, sum, total)
	}
	return sum, nil
}

// tail classifies a short remainder as zeros or a torn write.
func (s *SegmentReader) tail(pos int64, torn string) ([]byte, End, error) {
	zero, err := s.allZero(pos)
	if err != nil {
		return nil, EndNone, err
	}
	if zero {
		s.endMsg = fmt.Sprintf("%d zero bytes from byte %d to the end", s.size-pos, pos)
		return nil, EndZeroTail, nil
	}
	s.endMsg = torn
	return nil, EndTorn, nil
}

func (s *SegmentReader) allZero(pos int64) (bool, error) {
	for p := pos; p < s.size; {
		n := int(min(int64(windowSize), s.size-p))
		b, err := s.window(p, n)
		if err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		p += int64(n)
	}
	return true, nil
}

// Resync looks for the next entry after the current position that frames
// and checksums correctly, so a dump can go on past corruption. It returns
// false when no valid entry follows. Offsets are not considered: a valid CRC
// over a plausible frame is the signal Kafka's own format offers.
func (s *SegmentReader) Resync() bool {
	s.err, s.end, s.endMsg = nil, EndNone, ""
	for q := s.pos + 1; s.size-q >= HeaderSizeUpToMagic; q++ {
		h, err := s.window(q, HeaderSizeUpToMagic)
		if err != nil {
			s.err = err
			return false
		}
		size := int32(binary.BigEndian.Uint32(h[8:]))
		magic := int8(h[MagicOffset])
		total := int64(size) + LogOverhead
		if size < legacyMinSize || magic < 0 || magic > 2 || total > s.size-q || total > s.maxBatch() ||
			(magic == 2 && total < V2HeaderSize) {
			continue
		}
		b, err := s.window(q, int(total))
		if err != nil {
			s.err = err
			return false
		}
		cand := Batch{Pos: q, Data: b}
		if cand.Validate() == nil {
			s.pos = q
			return true
		}
	}
	s.pos = s.size
	return false
}
