// Package layout knows the names Kafka gives the directories and files of a
// log directory, and walks a log directory or a partition directory one
// level deep.
//
// A log directory (one entry of a broker's log.dirs) holds meta.properties,
// the offset checkpoints, .lock, .kafka_cleanshutdown and one directory per
// partition. A partition directory is named "<topic>-<partition>" and holds
// the segments ("%020d.log" with its .index, .timeindex and .txnindex),
// producer snapshots ("%020d.snapshot"), leader-epoch-checkpoint and
// partition.metadata; a KRaft __cluster_metadata-0 is one too, with
// "<offset>-<epoch>.checkpoint" snapshots and quorum-state besides.
package layout

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// MetadataTopic is KRaft's metadata log, __cluster_metadata-0: the raft
// log of the controllers, which a broker's LogManager does not manage, and
// which no cleaner, retention or recovery of a topic applies to.
const MetadataTopic = "__cluster_metadata"

// MaxTopicLength is the longest topic name Kafka accepts (Topic.MAX_NAME_LENGTH).
const MaxTopicLength = 249

// ErrInvalidTopic is wrapped by ValidateTopic's errors.
var ErrInvalidTopic = errors.New("invalid topic name")

// ValidateTopic checks a topic name as Kafka's Topic.validate does: 1 to 249
// characters from [a-zA-Z0-9._-], and neither "." nor "..".
func ValidateTopic(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	case name == "." || name == "..":
		return fmt.Errorf("%w %q", ErrInvalidTopic, name)
	case len(name) > MaxTopicLength:
		return fmt.Errorf("%w: %d characters, the limit is %d", ErrInvalidTopic, len(name), MaxTopicLength)
	}
	for i := 0; i < len(name); i++ {
		if !topicChar(name[i]) {
			return fmt.Errorf("%w %q: character %q at %d is not one of [a-zA-Z0-9._-]", ErrInvalidTopic, name, name[i], i)
		}
	}
	return nil
}

func topicChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// DirKind tells a live partition directory from the renamed ones Kafka keeps
// while it deletes or moves a partition.
type DirKind int

const (
	Normal DirKind = iota // <topic>-<partition>
	Delete                // <topic>-<partition>.<uniqueId>-delete: topic deleted, removal pending
	Future                // <topic>-<partition>.<uniqueId>-future: copy being built by an alter-log-dirs move
	Stray                 // <topic>-<partition>.<uniqueId>-stray: KRaft found the partition no longer assigned here
)

// dirSuffixes are the name suffixes of the renamed kinds, indexed by kind.
var dirSuffixes = [...]string{Delete: "-delete", Future: "-future", Stray: "-stray"}

func (k DirKind) String() string {
	switch k {
	case Normal:
		return "normal"
	case Delete:
		return "delete"
	case Future:
		return "future"
	case Stray:
		return "stray"
	}
	return "DirKind(" + strconv.Itoa(int(k)) + ")"
}

// PartitionDir is what the name of a partition directory says.
type PartitionDir struct {
	Topic     string
	Partition int32
	Kind      DirKind
	UniqueID  string // the random id in Delete, Future and Stray names; "" for Normal
	Name      string // the directory's name as found
}

// ErrNotPartitionDir is wrapped by ParsePartitionDir's errors.
var ErrNotPartitionDir = errors.New("not a partition directory name")

// PartitionDirName returns "<topic>-<partition>", the name of a live
// partition's directory.
func PartitionDirName(topic string, partition int32) string {
	return topic + "-" + strconv.FormatInt(int64(partition), 10)
}

// ParsePartitionDir parses the name of a partition directory the way Kafka's
// LocalLog.parseTopicPartitionName does. Topics may contain '-' and '.', so
// the partition follows the last '-'; in the renamed kinds the topic and
// partition are what precedes the last '.'.
//
// It is stricter than Kafka in two ways that matter only for names no broker
// writes: the topic must pass ValidateTopic, and the partition must be plain
// ASCII digits (Java's Integer.parseInt would also take a '+' sign and
// non-ASCII digits). Leading zeros are accepted, as Kafka accepts them.
// Delete and Stray names may carry a topic that Kafka cut short to keep the
// name within 255 bytes.
func ParsePartitionDir(name string) (PartitionDir, error) {
	pd := PartitionDir{Name: name}
	stem := name
	for k, suffix := range dirSuffixes {
		if suffix != "" && strings.HasSuffix(name, suffix) {
			pd.Kind = DirKind(k)
			stem = name[:len(name)-len(suffix)]
			break
		}
	}
	if pd.Kind != Normal {
		dot := strings.LastIndexByte(stem, '.')
		if dot < 0 {
			return PartitionDir{}, notPartitionDir(name, "no '.' before the unique id")
		}
		pd.UniqueID = stem[dot+1:]
		if pd.UniqueID == "" || strings.ContainsAny(pd.UniqueID, " \t\n\v\f\r") {
			return PartitionDir{}, notPartitionDir(name, "empty or blank unique id")
		}
		stem = stem[:dot]
	}
	dash := strings.LastIndexByte(stem, '-')
	if dash < 0 {
		return PartitionDir{}, notPartitionDir(name, "no '-' before the partition number")
	}
	pd.Topic = stem[:dash]
	p, ok := parsePartition(stem[dash+1:])
	if !ok {
		return PartitionDir{}, notPartitionDir(name, fmt.Sprintf("partition %q is not a number from 0 to 2147483647", stem[dash+1:]))
	}
	pd.Partition = p
	if err := ValidateTopic(pd.Topic); err != nil {
		return PartitionDir{}, fmt.Errorf("%w %q: %w", ErrNotPartitionDir, name, err)
	}
	return pd, nil
}

func notPartitionDir(name, why string) error {
	return fmt.Errorf("%w %q: %s", ErrNotPartitionDir, name, why)
}

func parsePartition(s string) (int32, bool) {
	if s == "" || !allDigits(s) {
		return 0, false
	}
	p, err := strconv.ParseInt(s, 10, 32)
	return int32(p), err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// PartitionOf names the partition of a directory's path, as the JSON
// objects of the features do: topic "" and partition -1 when the name is
// not a partition's.
func PartitionOf(dir string) (topic string, partition int32) {
	pd, err := ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return "", -1
	}
	return pd.Topic, pd.Partition
}
