package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// Size limits for the small files read whole. Kafka writes them far smaller;
// the limits keep a hostile file from sizing memory.
const (
	maxSmallFile = 1 << 20
	// A producer snapshot holds 46 bytes per producer: 16 MiB is 350 000
	// producers on one partition.
	maxSnapshot = 16 << 20
)

var errTooLarge = errors.New("too large")

// readSmall reads a whole file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

// irregular says why a file that is not regular is a problem.
func irregular(path string) (Code, string) {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return CodeSymlink, "a symbolic link, never followed inside a log directory: what it points at is not verified"
	}
	what := "gone"
	if err == nil {
		what = safefile.FileType(fi.Mode())
	}
	return CodeNotRegular, "not a regular file (" + what + "): Kafka does not load it, and logtool does not open it"
}

// reportIrregular reports a file that is not regular, or a link.
func reportIrregular(c *collector, path string) {
	code, why := irregular(path)
	c.problem(code, path, -1, "%s", why)
}

// corruptFinding reports a parser's CorruptError as a problem of the kind
// code about the file it names, or else file, and returns any other error. A file that is
// not regular is a problem too, not a failure to verify.
func corruptFinding(c *collector, code Code, err error, file string) error {
	if errors.Is(err, safefile.ErrNotRegular) {
		// The error names the file; file may be only the partition.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			file = pe.Path
		}
		if why := layout.BrokerRefusalAt(file); why != "" {
			if !c.has(file) {
				c.problem(CodeBrokerRefusesName, file, -1, "%s", why)
			}
			return nil
		}
		reportIrregular(c, file)
		return nil
	}
	ce, ok := logfmt.AsCorrupt(err)
	if !ok {
		return err
	}
	msg := ce.Msg
	if ce.Err != nil {
		msg += ": " + ce.Err.Error()
	}
	if ce.File != "" {
		file = ce.File
	}
	c.problem(code, file, ce.Pos, "%s", msg)
	return nil
}

// isNotExist tells an absent optional file from one that cannot be read.
// isNotExist is true for a file that is absent, or not a regular file: a
// FIFO or device under a Kafka name is reported where the listing finds it
// (Partition.Irregular) and otherwise taken for absent, as Kafka does.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, safefile.ErrNotRegular)
}

// checkSmall reads a small file and reports what parse says of it.
func checkSmall(c *collector, path, what string, parse func([]byte) error) error {
	b, err := readSmall(path, maxSmallFile)
	if errors.Is(err, errTooLarge) {
		c.problem(CodeTooLarge, path, maxSmallFile, "larger than %d bytes, far more than any %s holds", maxSmallFile, what)
		return nil
	}
	if err != nil {
		return err
	}
	if err := parse(b); err != nil {
		return corruptFinding(c, CodeUnreadable, err, path)
	}
	return nil
}

func checkPartitionMetadata(c *collector, path string) error {
	return checkSmall(c, path, "partition.metadata", func(b []byte) error {
		_, err := checkpoint.ReadPartitionMetadata(b, path)
		return err
	})
}

func checkQuorumState(c *collector, path string) error {
	return checkSmall(c, path, "quorum-state", func(b []byte) error {
		_, err := checkpoint.ReadQuorumState(b, path)
		return err
	})
}

// checkMetaProperties parses meta.properties. Kafka writes only printable
// ASCII outside comments (ids, numbers, "key=value"), so any other byte there
// is damage, even where the parse survives it: in a key it hides the key, in
// an id it makes another id.
func checkMetaProperties(c *collector, path string) error {
	return checkSmall(c, path, "meta.properties", func(b []byte) error {
		if _, err := checkpoint.ReadMetaProperties(b, path); err != nil {
			return err
		}
		if pos := strayByte(b); pos >= 0 {
			return logfmt.Corruptf(path, int64(pos), "byte %#02x outside a comment, where Kafka writes only printable ASCII", b[pos])
		}
		return nil
	})
}

// strayByte returns the position of the first byte outside comment lines
// that is neither printable ASCII nor white space, or -1.
func strayByte(b []byte) int {
	comment, lineStart := false, true
	for i, x := range b {
		switch {
		case x == '\n' || x == '\r':
			comment, lineStart = false, true
			continue
		case lineStart && (x == ' ' || x == '\t' || x == '\f'):
			continue
		case lineStart:
			comment, lineStart = x == '#' || x == '!', false
		}
		if !comment && (x < ' ' && x != '\t' && x != '\f' || x > '~') {
			return i
		}
	}
	return -1
}

// checkSnapshot parses a producer snapshot and, when the log end offset is
// known (not noOffset), checks that the snapshot was not taken beyond it.
func checkSnapshot(c *collector, path string, logEnd int64) error {
	_, err := snapshot.Read(path, maxSnapshot)
	if errors.Is(err, snapshot.ErrTooLarge) {
		c.info(CodeSnapshotTooLarge, path, -1, "larger than %d bytes: not checked", maxSnapshot)
		return nil
	}
	if _, corrupt := logfmt.AsCorrupt(err); err != nil && !corrupt {
		return err
	}
	if err != nil {
		// A broker skips an unreadable snapshot and rebuilds the producer
		// state from an older one or from the log, which can take long and
		// loses producers whose batches are gone.
		return corruptFinding(c, CodeUnreadable, err, path)
	}
	off, ok := snapshot.OffsetFromName(filepath.Base(path))
	if ok && logEnd != noOffset && off > logEnd {
		c.problem(CodeSnapshotPastEnd, path, -1, "snapshot taken at offset %d, beyond the log end offset %d: the log lost records it held when the snapshot was written (a broker deletes this snapshot when it loads the log)", off, logEnd)
	}
	return nil
}

// checkCleaner checks logtool's per-partition cleaner-checkpoint, and its
// offset against the log when the log end is known.
func checkCleaner(c *collector, path string, logStart, logEnd int64) error {
	f, err := safefile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cc, err := checkpoint.ReadCleaner(f, path)
	if err != nil {
		return corruptFinding(c, CodeUnreadable, err, path)
	}
	// The offset is on line 2, after "1\n".
	if logEnd != noOffset && (cc.FirstDirtyOffset < logStart || cc.FirstDirtyOffset > logEnd) {
		c.problem(CodeCleanerOutOfRange, path, 2, "first dirty offset %d lies outside the log's offsets %d to %d: the cleaner would reset it to the log start and clean the whole log again", cc.FirstDirtyOffset, logStart, logEnd)
	}
	return nil
}

// readEpochs reads a leader-epoch-checkpoint and checks that epochs and
// start offsets increase, as Kafka's LeaderEpochFileCache keeps them. ok is
// false when the file is absent or has problems, so that nothing is judged
// against it.
func readEpochs(c *collector, path string) ([]checkpoint.EpochEntry, bool, error) {
	f, err := safefile.Open(path)
	if isNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	entries, err := checkpoint.ReadLeaderEpochs(f, path)
	if err != nil {
		return nil, false, corruptFinding(c, CodeUnreadable, err, path)
	}
	var bad []int
	for i, e := range entries {
		if e.Epoch < 0 || e.StartOffset < 0 || i > 0 && (e.Epoch <= entries[i-1].Epoch || e.StartOffset <= entries[i-1].StartOffset) {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return entries, true, nil
	}
	pos := epochPositions(path, bad)
	for _, i := range bad {
		e := entries[i]
		if e.Epoch < 0 || e.StartOffset < 0 {
			c.problem(CodeEpochOrder, path, pos[i], "entry (epoch %d, start offset %d) is negative", e.Epoch, e.StartOffset)
			continue
		}
		p := entries[i-1]
		c.problem(CodeEpochOrder, path, pos[i], "entry (epoch %d, start offset %d) does not follow (epoch %d, start offset %d): Kafka keeps both increasing", e.Epoch, e.StartOffset, p.Epoch, p.StartOffset)
	}
	return entries, false, nil
}

// epochPositions returns the byte positions of the lines of the entries
// with the given indexes: entries follow the version and count lines.
func epochPositions(path string, entries []int) map[int]int64 {
	lines := make([]int, len(entries))
	for i, e := range entries {
		lines[i] = e + 3
	}
	byLine := linePositions(path, lines)
	out := make(map[int]int64, len(entries))
	for _, e := range entries {
		out[e] = byLine[e+3]
	}
	return out
}

// linePositions returns the byte position where each of the given 1-based
// lines starts, ending lines as Java's BufferedReader.readLine does (at
// "\n", "\r" or "\r\n"), which is how Kafka reads checkpoints. Lines not
// found, or a file that cannot be read, give -1.
func linePositions(path string, lines []int) map[int]int64 {
	out := make(map[int]int64, len(lines))
	want := map[int]bool{}
	maxLine := 0
	for _, l := range lines {
		out[l], want[l] = -1, true
		maxLine = max(maxLine, l)
	}
	f, err := safefile.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	r := bufio.NewReader(f)
	line, pos := 1, int64(0)
	if want[1] {
		out[1] = 0
	}
	for line < maxLine {
		b, err := r.ReadByte()
		if err != nil {
			break
		}
		pos++
		if b == '\r' {
			if next, err := r.Peek(1); err == nil && next[0] == '\n' {
				r.ReadByte()
				pos++
			}
		} else if b != '\n' {
			continue
		}
		line++
		if want[line] {
			out[line] = pos
		}
	}
	return out
}

// epochCheck compares the leader epoch stamped on each v2 batch with
// leader-epoch-checkpoint. Kafka records there the first offset of every
// epoch it wrote in, so the batch at offset o must carry the epoch of the
// last entry starting at or before o. The epoch field lies outside the
// batch checksum, and followers truncate their logs by this file, so a
// disagreement is a damaged batch header or a damaged checkpoint; it is
// reported once per checkpoint entry, on the checkpoint's line.
type epochCheck struct {
	c       *collector
	file    string
	entries []checkpoint.EpochEntry
	// logStart: batches below the log start offset may predate the first
	// entry, which Kafka moves up to the log start when it deletes records.
	logStart int64
	flagged  []bool
	reported int
}

func (e *epochCheck) batch(log string, pos, base int64, epoch int32) {
	if epoch < 0 || base < e.logStart {
		return
	}
	k := sort.Search(len(e.entries), func(i int) bool { return e.entries[i].StartOffset > base }) - 1
	if k >= 0 && e.entries[k].Epoch == epoch {
		return
	}
	j := max(k, 0)
	if e.flagged[j] {
		return
	}
	e.flagged[j] = true
	// Positions cost a read of the file each; past what the collector lists
	// they are not needed.
	at := int64(-1)
	if e.reported < maxListed {
		at = epochPositions(e.file, []int{j})[j]
	}
	e.reported++
	batch := fmt.Sprintf("the batch at byte %d of %s (offset %d) has leader epoch %d", pos, filepath.Base(log), base, epoch)
	last := e.entries[len(e.entries)-1]
	switch en := e.entries[j]; {
	case k < 0:
		e.c.problem(CodeEpochMismatch, e.file, at, "the first epoch, %d, starts at offset %d, but %s", en.Epoch, en.StartOffset, batch)
	case epoch > last.Epoch:
		e.c.problem(CodeEpochMismatch, e.file, at, "no entry for leader epoch %d, yet %s: a broker adds it only when it recovers the segment after an unclean shutdown", epoch, batch)
	default:
		e.c.problem(CodeEpochMismatch, e.file, at, "entry says offsets from %d on belong to epoch %d, but %s", en.StartOffset, en.Epoch, batch)
	}
}

// checkCleanShutdown checks that a .kafka_cleanshutdown marker is empty or
// holds what Kafka 3.7 and later write.
func checkCleanShutdown(c *collector, path string) error {
	return checkSmall(c, path, ".kafka_cleanshutdown", func(b []byte) error {
		_, err := checkpoint.ReadCleanShutdown(b, path)
		ce, ok := logfmt.AsCorrupt(err)
		if !ok {
			return err
		}
		// LogManager checks only that the marker exists; the epoch is for
		// the KRaft broker registration (KIP-966).
		cause := *ce
		cause.File, cause.Pos = "", -1
		return &logfmt.CorruptError{File: ce.File, Pos: ce.Pos, Err: &cause,
			Msg: "a broker skips log recovery all the same, but cannot read the broker epoch it registers with, so the controller takes the restart for an unclean shutdown"}
	})
}
