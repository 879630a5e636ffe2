package kafkaloader

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The partition files UnifiedLog.create reads for every directory it loads,
// "-delete" ones included.
const (
	partitionMetadataFile = "partition.metadata"
	leaderEpochFile       = "leader-epoch-checkpoint"
)

// errOffline is wrapped by the error for a file that makes the broker take
// the whole log directory offline: CheckpointFileWithFailureHandler and
// PartitionMetadataFile turn a read error into a log directory failure.
//
//lint:ignore ST1005 a sentence that starts with a name
var errOffline = errors.New("Kafka takes the log directory offline")

// readPartitionFiles reads partition.metadata (UnifiedLog.initializeTopicId,
// PartitionMetadataReadBuffer) and leader-epoch-checkpoint
// (LeaderEpochFileCache, CheckpointFile.CheckpointReadBuffer) as a broker
// does when it loads a partition directory. Their contents do not change
// which records are served; only whether they read does.
func readPartitionFiles(dir string) error {
	if b, ok, err := readRegular(filepath.Join(dir, partitionMetadataFile)); err != nil {
		return err
	} else if ok {
		if err := parsePartitionMetadata(lines(b)); err != nil {
			return fmt.Errorf("%s: %w: %w", partitionMetadataFile, errOffline, err)
		}
	}
	if b, ok, err := readRegular(filepath.Join(dir, leaderEpochFile)); err != nil {
		return err
	} else if ok {
		if err := parseLeaderEpochs(lines(b)); err != nil {
			return fmt.Errorf("%s: %w: %w", leaderEpochFile, errOffline, err)
		}
	}
	return nil
}

// readRegular reads a file that exists as File.exists sees it.
func readRegular(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// lines splits as BufferedReader.readLine does: at \n, \r or \r\n, with no
// line after a final terminator.
func lines(b []byte) []string {
	var out []string
	for s := string(b); s != ""; {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

var (
	metadataSeparator = regexp.MustCompile(`:\s+`)
	epochSeparator    = regexp.MustCompile(`\s+`)
)

// parsePartitionMetadata is PartitionMetadataReadBuffer.read: "version: N"
// with N >= 0, then "topic_id: <base64 UUID>" not all zeros; later lines
// are not read.
func parsePartitionMetadata(ls []string) error {
	field := func(i int, key string) (string, error) {
		if i >= len(ls) {
			return "", fmt.Errorf("malformed line: null")
		}
		kv := metadataSeparator.Split(ls[i], 2)
		if len(kv) != 2 || kv[0] != key {
			return "", fmt.Errorf("malformed line %q", ls[i])
		}
		return kv[1], nil
	}
	v, err := field(0, "version")
	if err != nil {
		return err
	}
	if n, err := strconv.ParseInt(v, 10, 32); err != nil || n < 0 {
		return fmt.Errorf("version %q", v)
	}
	id, err := field(1, "topic_id")
	if err != nil {
		return err
	}
	// Uuid.fromString: at most 24 characters of URL-safe base64, padding
	// optional, decoding to 16 bytes.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(id, "="))
	if len(id) > 24 || err != nil || len(raw) != 16 {
		return fmt.Errorf("topic id %q", id)
	}
	if strings.Trim(string(raw), "\x00") == "" {
		return fmt.Errorf("the zero topic id")
	}
	return nil
}

// parseLeaderEpochs is CheckpointReadBuffer.read with the leader epoch
// formatter: an empty file or one with only its version is no entries;
// otherwise version 0, a count, and exactly that many "epoch offset" lines.
func parseLeaderEpochs(ls []string) error {
	if len(ls) == 0 {
		return nil
	}
	if v, err := strconv.ParseInt(ls[0], 10, 32); err != nil {
		return fmt.Errorf("malformed line %q", ls[0])
	} else if v != 0 {
		return fmt.Errorf("version %d, expected 0", v)
	}
	if len(ls) == 1 {
		return nil
	}
	n, err := strconv.ParseInt(ls[1], 10, 32)
	if err != nil {
		return fmt.Errorf("malformed line %q", ls[1])
	}
	for _, l := range ls[2:] {
		f := epochSeparator.Split(l, -1)
		for len(f) > 0 && f[len(f)-1] == "" { // String.split drops trailing empty strings
			f = f[:len(f)-1]
		}
		if len(f) != 2 {
			return fmt.Errorf("malformed line %q", l)
		}
		_, err1 := strconv.ParseInt(f[0], 10, 32)
		_, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("malformed line %q", l)
		}
	}
	if int64(len(ls)-2) != n {
		return fmt.Errorf("expected %d entries, found %d", n, len(ls)-2)
	}
	return nil
}
