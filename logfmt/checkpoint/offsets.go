package checkpoint

import (
	"io"
	"os"
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

// ReadOffsets reads a version-0 offset checkpoint (recovery-point,
// log-start, replication or cleaner-offset) with the rules of Kafka's
// CheckpointFile and OffsetCheckpointFile: an empty file, or one holding only
// the version line, has no entries; the version must be 0; every entry line
// splits on whitespace into topic, int32 partition and int64 offset; and the
// number of entries must equal the count on line 2. Topic names are not
// validated. Entries keep the file's order. Memory grows with the entries
// only: lines are streamed, and repeated topic names share one string.
func ReadOffsets(r io.Reader, file string) ([]OffsetEntry, error) {
	var entries []OffsetEntry
	topics := make(map[string]string)
	err := scanCheckpoint(r, file, 3, func(s *lineScanner, f [][]byte) error {
		p, ok := parseInt(f[1], 32)
		if !ok {
			return s.corrupt("partition %s is not an int32", excerpt(f[1]))
		}
		o, ok := parseInt(f[2], 64)
		if !ok {
			return s.corrupt("offset %s is not an int64", excerpt(f[2]))
		}
		t, ok := topics[string(f[0])]
		if !ok {
			t = string(f[0])
			topics[t] = t
		}
		entries = append(entries, OffsetEntry{Topic: t, Partition: int32(p), Offset: o, Line: s.line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// ReadOffsetsFile reads the offset checkpoint at path. A missing file is an
// error satisfying errors.Is(err, fs.ErrNotExist); Kafka would create it empty.
func ReadOffsetsFile(path string) ([]OffsetEntry, error) {
	f, err := os.Open(path)
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
		dst = append(dst, e.Topic...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(e.Partition), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.Offset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

// EpochEntry is one line of a leader-epoch-checkpoint: the first offset
// written in a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ReadLeaderEpochs reads a leader-epoch-checkpoint with the rules of Kafka's
// LeaderEpochCheckpointFile: the framing of ReadOffsets, with entry lines of
// exactly two fields, an int32 epoch and an int64 start offset.
func ReadLeaderEpochs(r io.Reader, file string) ([]EpochEntry, error) {
	var entries []EpochEntry
	err := scanCheckpoint(r, file, 2, func(s *lineScanner, f [][]byte) error {
		e, ok := parseInt(f[0], 32)
		if !ok {
			return s.corrupt("epoch %s is not an int32", excerpt(f[0]))
		}
		o, ok := parseInt(f[1], 64)
		if !ok {
			return s.corrupt("start offset %s is not an int64", excerpt(f[1]))
		}
		entries = append(entries, EpochEntry{Epoch: int32(e), StartOffset: o})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
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

// scanCheckpoint walks a version-0 checkpoint as Kafka's
// CheckpointFile.CheckpointReadBuffer does and calls entry for each entry
// line, already split into exactly fields fields.
//
// Kafka sizes its list by the count line before reading any entry; this does
// not, so a count of two billion over three lines costs nothing. It also
// stops at the first entry beyond the count rather than reading on.
func scanCheckpoint(r io.Reader, file string, fields int, entry func(*lineScanner, [][]byte) error) error {
	s := newLineScanner(r, file)
	line, err := s.scan()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	v, ok := parseInt(line, 32)
	if !ok {
		return s.corrupt("malformed version line %s", excerpt(line))
	}
	if v != 0 {
		return s.corrupt("unsupported version %d, want 0", v)
	}

	line, err = s.scan()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	want, ok := parseInt(line, 32)
	if !ok {
		return s.corrupt("malformed entry count %s", excerpt(line))
	}
	if want < 0 {
		return s.corrupt("negative entry count %d", want)
	}
	countPos := s.pos

	var n int64
	var f [][]byte
	for {
		line, err := s.scan()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		f = splitFields(line, f, fields)
		if len(f) != fields {
			return s.corrupt("malformed entry %s: want %d fields", excerpt(line), fields)
		}
		if err := entry(s, f); err != nil {
			return err
		}
		if n++; n > want {
			return s.corrupt("entry beyond the %d declared on line 2", want)
		}
	}
	if n != want {
		return logfmt.Corruptf(file, countPos, "line 2: declares %d entries, file has %d", want, n)
	}
	return nil
}
