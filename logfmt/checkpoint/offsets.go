package checkpoint

import (
	"github.com/logtool/logtool/internal/safefile"

	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/logtool/logtool/logfmt"
)

// OffsetEntry is one line of a root offset checkpoint.
type OffsetEntry struct {
	Topic     string
	Partition int32
	Offset    int64
	Line      int // 1-based line it was read from; 0 when built in memory
}

// OffsetReader reads a version-0 offset checkpoint (recovery-point,
// log-start, replication or cleaner-offset) one entry at a time, with the
// rules of Kafka's CheckpointFile and OffsetCheckpointFile: an empty file,
// or one holding only the version line, has no entries; the version must be
// 0; every entry line splits on whitespace into topic, int32 partition and
// int64 offset; and the number of entries must equal the count on line 2.
// Topic names are not validated. Entries come in the file's order.
//
// A broker's checkpoint has a line per partition, and a damaged or hostile
// one may have millions, so the reader holds one line at a time, whatever
// the file's size. The count can only be checked at the end: entries are
// returned before a file turns out to be short, and a caller that must not
// act on a bad file reads it to the end before acting.
//
// The usual shape is:
//
//	r := checkpoint.NewOffsetReader(f, path)
//	for r.Next() {
//		e := r.Entry()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
type OffsetReader struct {
	c      entryScanner
	e      OffsetEntry
	err    error
	topics map[string]string
}

// NewOffsetReader returns a reader of the offset checkpoint in r; file
// names it in errors.
func NewOffsetReader(r io.Reader, file string) *OffsetReader {
	return &OffsetReader{c: entryScanner{s: newLineScanner(r, file), fields: 3}}
}

// Next advances to the next entry. It returns false at the end of the file
// or at the first error, which Err then returns.
func (r *OffsetReader) Next() bool {
	if r.err != nil {
		return false
	}
	f, err := r.c.next()
	if err == nil {
		err = r.parse(f)
	}
	if err != nil {
		if err != io.EOF {
			r.err = err
		}
		return false
	}
	return true
}

func (r *OffsetReader) parse(f [][]byte) error {
	s := r.c.s
	p, ok := parseInt(f[1], 32)
	if !ok {
		return s.corrupt("partition %s is not an int32", excerpt(f[1]))
	}
	o, ok := parseInt(f[2], 64)
	if !ok {
		return s.corrupt("offset %s is not an int64", excerpt(f[2]))
	}
	if err := r.c.counted(); err != nil {
		return err
	}
	r.e.Topic = r.topic(f[0])
	r.e.Partition, r.e.Offset, r.e.Line = int32(p), o, s.line
	return nil
}

// topic returns b as a string. A broker's file has far fewer topics than
// lines, so the names seen are remembered and entries of one topic share a
// string: a look-up by bytes does not allocate.
func (r *OffsetReader) topic(b []byte) string {
	if t, ok := r.topics[string(b)]; ok {
		return t
	}
	switch {
	case r.topics == nil:
		r.topics = make(map[string]string)
	case len(r.topics) >= maxTopics:
		clear(r.topics) // keeps the table: a new one every maxTopics lines was most of the work
	}
	t := string(b)
	r.topics[t] = t
	return t
}

// maxTopics bounds the topic names an OffsetReader remembers; past it, it
// forgets them all, so that a file naming a new topic on every line costs
// a bounded amount.
const maxTopics = 1024

// Entry returns the entry Next advanced to.
func (r *OffsetReader) Entry() OffsetEntry { return r.e }

// Err returns the error that ended Next early: a *logfmt.CorruptError for a
// malformed file, else the read error. It is nil at the end of a valid file.
func (r *OffsetReader) Err() error { return r.err }

// ScanOffsets calls fn for each entry of the offset checkpoint in r, read
// as OffsetReader does, and returns the reader's error or the first error
// of fn, which ends the scan.
func ScanOffsets(r io.Reader, file string, fn func(OffsetEntry) error) error {
	or := NewOffsetReader(r, file)
	for or.Next() {
		if err := fn(or.Entry()); err != nil {
			return err
		}
	}
	return or.Err()
}

// ScanOffsetsFile is ScanOffsets on the file at path. A missing file is an
// error satisfying errors.Is(err, fs.ErrNotExist); Kafka would create it
// empty.
func ScanOffsetsFile(path string, fn func(OffsetEntry) error) error {
	f, err := safefile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ScanOffsets(f, path, fn)
}

// ReadOffsets reads a whole offset checkpoint into memory, as OffsetReader
// reads it. It is for files known to be small, and for tests: memory grows
// with the entries.
func ReadOffsets(r io.Reader, file string) ([]OffsetEntry, error) {
	var entries []OffsetEntry
	err := ScanOffsets(r, file, func(e OffsetEntry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// ReadOffsetsFile is ReadOffsets on the file at path. A missing file is an
// error satisfying errors.Is(err, fs.ErrNotExist).
func ReadOffsetsFile(path string) ([]OffsetEntry, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOffsets(f, path)
}

// AppendOffsets appends the checkpoint Kafka would write for entries, in
// their order: "0", the count, then "topic partition offset" lines, each
// ending in "\n". Topic names are written as given.
func AppendOffsets(dst []byte, entries []OffsetEntry) []byte {
	dst = appendHeader(dst, len(entries))
	for _, e := range entries {
		dst = appendOffset(dst, e)
	}
	return dst
}

func appendOffset(dst []byte, e OffsetEntry) []byte {
	dst = append(dst, e.Topic...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(e.Partition), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, e.Offset, 10)
	return append(dst, '\n')
}

// OffsetWriter writes the bytes AppendOffsets would, one entry at a time,
// so that a checkpoint too large to build in memory can be rewritten from
// the old file through a filter. The count line comes before the entries,
// so the number of entries is given up front, usually counted by a first
// pass over the old file, and Close checks that it was kept.
type OffsetWriter struct {
	w     *bufio.Writer
	file  string
	want  int
	n     int
	err   error
	buf   []byte
	began bool
}

// NewOffsetWriter returns a writer of a checkpoint of n entries to w; file
// names it in errors about the count. Errors of w are returned as they are.
func NewOffsetWriter(w io.Writer, file string, n int) *OffsetWriter {
	return &OffsetWriter{w: bufio.NewWriterSize(w, 64<<10), file: file, want: n}
}

// Write writes the line of e. Writing more than the declared number of
// entries is an error.
func (w *OffsetWriter) Write(e OffsetEntry) error {
	if w.err != nil {
		return w.err
	}
	if w.n++; w.n > w.want {
		w.err = fmt.Errorf("%s: more entries than the %d declared", w.file, w.want)
		return w.err
	}
	if w.header(); w.err != nil {
		return w.err
	}
	w.buf = appendOffset(w.buf[:0], e)
	_, w.err = w.w.Write(w.buf)
	return w.err
}

// header writes the version and count lines before the first entry, or at
// Close for a file without entries.
func (w *OffsetWriter) header() {
	if !w.began {
		w.began = true
		_, w.err = w.w.Write(appendHeader(w.buf[:0], w.want))
	}
}

// Close writes what is buffered to the underlying writer, which it does not
// close. It fails if fewer entries were written than declared.
func (w *OffsetWriter) Close() error {
	if w.err == nil {
		w.header()
	}
	if w.err == nil && w.n != w.want {
		w.err = fmt.Errorf("%s: %d entries written, %d declared", w.file, w.n, w.want)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// WriteOffsetsFile replaces the offset checkpoint at path with n entries,
// which fill passes to write in order, the crash-safe way (temporary file
// safefile.TempName(path), fsync, rename, directory fsync: internal/safefile). Until
// it returns nil the old file is untouched. The entries are streamed, so a
// caller can copy them from the old file while it writes the new one.
func WriteOffsetsFile(path string, n int, fill func(write func(OffsetEntry) error) error) error {
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	w := NewOffsetWriter(f, path, n)
	if err := fill(w.Write); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Commit()
}

// LowerOffsetsFile brings every entry of the partition in the offset
// checkpoint at path down to limit where it is above it, and returns
// whether one was. The file is rewritten only then, with WriteOffsetsFile,
// every other line copied as it is. Callers hold the log directory's lock:
// the file is the whole log directory's.
func LowerOffsetsFile(path, topic string, partition int32, limit int64) (bool, error) {
	n, above := 0, false
	err := ScanOffsetsFile(path, func(e OffsetEntry) error {
		n++
		above = above || e.Topic == topic && e.Partition == partition && e.Offset > limit
		return nil
	})
	if err != nil || !above {
		return false, err
	}
	return true, WriteOffsetsFile(path, n, func(write func(OffsetEntry) error) error {
		return ScanOffsetsFile(path, func(e OffsetEntry) error {
			if e.Topic == topic && e.Partition == partition && e.Offset > limit {
				e.Offset = limit
			}
			return write(e)
		})
	})
}

// EpochEntry is one line of a leader-epoch-checkpoint: the first offset
// written in a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ReadLeaderEpochs reads a leader-epoch-checkpoint with the rules of Kafka's
// LeaderEpochCheckpointFile: the framing of OffsetReader, with entry lines
// of exactly two fields, an int32 epoch and an int64 start offset. A broker
// keeps one line per leader epoch, so the file is read whole.
func ReadLeaderEpochs(r io.Reader, file string) ([]EpochEntry, error) {
	var entries []EpochEntry
	c := entryScanner{s: newLineScanner(r, file), fields: 2}
	for {
		f, err := c.next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		e, ok := parseInt(f[0], 32)
		if !ok {
			return nil, c.s.corrupt("epoch %s is not an int32", excerpt(f[0]))
		}
		o, ok := parseInt(f[1], 64)
		if !ok {
			return nil, c.s.corrupt("start offset %s is not an int64", excerpt(f[1]))
		}
		if err := c.counted(); err != nil {
			return nil, err
		}
		entries = append(entries, EpochEntry{Epoch: int32(e), StartOffset: o})
	}
}

// AppendLeaderEpochs appends the leader-epoch-checkpoint Kafka would write.
func AppendLeaderEpochs(dst []byte, entries []EpochEntry) []byte {
	dst = appendHeader(dst, len(entries))
	for _, e := range entries {
		dst = strconv.AppendInt(dst, int64(e.Epoch), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.StartOffset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

func appendHeader(dst []byte, n int) []byte {
	dst = append(dst, "0\n"...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\n')
}

// entryScanner walks a version-0 checkpoint as Kafka's
// CheckpointFile.CheckpointReadBuffer does, returning each entry line split
// into exactly fields fields. The caller parses the fields and then calls
// counted, so that a malformed entry beyond the count is reported as
// malformed, as Kafka, which parses before it counts, reports it.
//
// Kafka sizes its list by the count line before reading any entry; this does
// not, so a count of two billion over three lines costs nothing. It also
// stops at the first entry beyond the count rather than reading on.
type entryScanner struct {
	s        *lineScanner
	fields   int
	f        [][]byte
	began    bool
	want, n  int64
	countPos int64 // where line 2 starts
}

// next returns the fields of the next entry line, io.EOF after the last
// one, or the error that ends the file.
func (c *entryScanner) next() ([][]byte, error) {
	if !c.began {
		c.began = true
		if err := c.header(); err != nil {
			return nil, err
		}
	}
	line, err := c.s.scan()
	if err == io.EOF {
		if c.n != c.want {
			return nil, logfmt.Corruptf(c.s.file, c.countPos, "line 2: declares %d entries, file has %d", c.want, c.n)
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	c.f = splitFields(line, c.f, c.fields)
	if len(c.f) != c.fields {
		return nil, c.s.corrupt("malformed entry %s: want %d fields", excerpt(line), c.fields)
	}
	return c.f, nil
}

// header reads the version and count lines. A file that ends before the
// count has no entries: want stays 0.
func (c *entryScanner) header() error {
	line, err := c.s.scan()
	if err != nil {
		return err
	}
	v, ok := parseInt(line, 32)
	if !ok {
		return c.s.corrupt("malformed version line %s", excerpt(line))
	}
	if v != 0 {
		return c.s.corrupt("unsupported version %d, want 0", v)
	}

	if line, err = c.s.scan(); err != nil {
		return err
	}
	if c.want, ok = parseInt(line, 32); !ok {
		return c.s.corrupt("malformed entry count %s", excerpt(line))
	}
	if c.want < 0 {
		return c.s.corrupt("negative entry count %d", c.want)
	}
	c.countPos = c.s.pos
	return nil
}

// counted counts the entry just parsed.
func (c *entryScanner) counted() error {
	if c.n++; c.n > c.want {
		return c.s.corrupt("entry beyond the %d declared on line 2", c.want)
	}
	return nil
}
