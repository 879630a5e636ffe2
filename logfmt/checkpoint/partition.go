package checkpoint

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// TopicID is a Kafka Uuid: 16 bytes, most significant long first.
type TopicID [16]byte

// String returns the id as Kafka's Uuid.toString does: URL-safe base64
// without padding, 22 characters.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseTopicID parses a topic id with the rules of Kafka's Uuid.fromString,
// and, as Kafka's partition.metadata reader does, rejects the all-zero id.
func ParseTopicID(s string) (TopicID, error) {
	id, err := parseUUID(s)
	if err == nil && id == (TopicID{}) {
		err = errors.New("topic ID is all zero")
	}
	return id, err
}

// parseUUID is Kafka's Uuid.fromString: at most 24 characters of URL-safe
// base64, padded or not, decoding to exactly 16 bytes. Like Java's decoder it
// ignores the unused low bits of the last character.
func parseUUID(s string) (TopicID, error) {
	var id TopicID
	if len(s) > 24 {
		return id, fmt.Errorf("UUID %.24q... is longer than 24 characters", s)
	}
	// Go's decoders skip CR and LF; Java's URL decoder rejects them.
	if strings.ContainsAny(s, "\r\n") {
		return id, fmt.Errorf("UUID %q is not base64url", s)
	}
	enc := base64.RawURLEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.URLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return id, fmt.Errorf("UUID %q is not base64url", s)
	}
	if len(b) != len(id) {
		return id, fmt.Errorf("UUID %q decodes to %d bytes, want 16", s, len(b))
	}
	copy(id[:], b)
	return id, nil
}

// PartitionMetadata is the content of a partition's partition.metadata file.
type PartitionMetadata struct {
	Version int // 0 is the only version Kafka writes
	TopicID TopicID
}

// ReadPartitionMetadataIn reads the partition.metadata of partition
// directory dir (ReadPartitionMetadata); nil, and no error, when there is
// none.
func ReadPartitionMetadataIn(dir string) (*PartitionMetadata, error) {
	path := filepath.Join(dir, layout.PartitionMetadataFile)
	b, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := ReadPartitionMetadata(b, path)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// ReadPartitionMetadata parses a partition.metadata file with the rules of
// Kafka's PartitionMetadataReadBuffer: line 1 is "version: <int>" with a
// version of at least 0, line 2 "topic_id: <uuid>" with a non-zero id, each
// key separated from its value by a colon and at least one whitespace
// character. Like Kafka it reads only those two lines and ignores anything
// after them.
func ReadPartitionMetadata(b []byte, file string) (PartitionMetadata, error) {
	var m PartitionMetadata
	line, next := nextLine(b, 0)
	if len(b) == 0 {
		return PartitionMetadata{}, logfmt.Corruptf(file, 0, "line 1: missing, want \"version: <n>\"")
	}
	val, ok := metadataValue(line, "version")
	if !ok {
		return PartitionMetadata{}, logfmt.Corruptf(file, 0, "line 1: malformed %s, want \"version: <n>\"", excerpt(line))
	}
	v, ok := parseInt(val, 32)
	if !ok {
		return PartitionMetadata{}, logfmt.Corruptf(file, 0, "line 1: version %s is not an int32", excerpt(val))
	}
	if v < 0 {
		return PartitionMetadata{}, logfmt.Corruptf(file, 0, "line 1: unsupported version %d", v)
	}
	m.Version = int(v)

	pos := next
	if pos == len(b) {
		return PartitionMetadata{}, logfmt.Corruptf(file, int64(pos), "line 2: missing, want \"topic_id: <id>\"")
	}
	line, _ = nextLine(b, pos)
	val, ok = metadataValue(line, "topic_id")
	if !ok {
		return PartitionMetadata{}, logfmt.Corruptf(file, int64(pos), "line 2: malformed %s, want \"topic_id: <id>\"", excerpt(line))
	}
	id, err := ParseTopicID(string(val))
	if err != nil {
		return PartitionMetadata{}, &logfmt.CorruptError{File: file, Pos: int64(pos), Msg: "line 2: bad topic ID", Err: err}
	}
	m.TopicID = id
	return m, nil
}

// metadataValue splits line as Kafka's Pattern.compile(":\\s+").split(line, 2)
// and returns the value when the key is key.
func metadataValue(line []byte, key string) ([]byte, bool) {
	for i := 0; i+1 < len(line); i++ {
		if line[i] != ':' || !isJavaSpace(line[i+1]) {
			continue
		}
		if string(line[:i]) != key {
			return nil, false
		}
		j := i + 1
		for j < len(line) && isJavaSpace(line[j]) {
			j++
		}
		return line[j:], true
	}
	return nil, false
}

// AppendPartitionMetadata appends the bytes Kafka's PartitionMetadata.encode
// writes: "version: <n>\ntopic_id: <id>", with no final newline.
func AppendPartitionMetadata(dst []byte, m PartitionMetadata) []byte {
	dst = append(dst, "version: "...)
	dst = strconv.AppendInt(dst, int64(m.Version), 10)
	dst = append(dst, "\ntopic_id: "...)
	return append(dst, m.TopicID.String()...)
}
