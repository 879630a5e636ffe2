package kafkaloader

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Root files of a log directory that the loader reads.
const (
	cleanShutdownFile   = ".kafka_cleanshutdown"
	recoveryPointFile   = "recovery-point-offset-checkpoint"
	logStartOffsetFile  = "log-start-offset-checkpoint"
	remoteIndexCacheDir = "remote-log-index-cache"
	metadataTopic       = "__cluster_metadata"
	deleteDirSuffix     = "-delete"
	futureDirSuffix     = "-future"
	strayDirSuffix      = "-stray"
)

// The renamed directory kinds must match these whole (LocalLog).
var dirPatterns = map[string]*regexp.Regexp{
	deleteDirSuffix: regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)-delete$`),
	futureDirSuffix: regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)-future$`),
	strayDirSuffix:  regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)-stray$`),
}

// DirOptions change how LoadLogDir reads a log directory's root files.
type DirOptions struct {
	// Unflushed loads as after a broker crash that flushed nothing: no
	// clean shutdown marker and no recovery point, so every segment of
	// every partition is recovered.
	Unflushed bool
}

// LoadLogDir loads every partition of a log directory as LogManager.loadLogs
// does, with the directory's clean shutdown marker and checkpoints, and
// returns the logs by directory name. A subdirectory whose name Kafka
// cannot parse as a partition is an error: the broker refuses to start.
// The remote index cache and the KRaft metadata partition are skipped.
func LoadLogDir(dir string, o DirOptions) ([]*Log, error) {
	_, err := os.Stat(filepath.Join(dir, cleanShutdownFile))
	clean := err == nil && !o.Unflushed
	recovery := readCheckpoint(filepath.Join(dir, recoveryPointFile))
	if o.Unflushed {
		recovery = nil
	}
	logStart := readCheckpoint(filepath.Join(dir, logStartOffsetFile))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type job struct {
		path, kind string
		tp         topicPartition
	}
	var jobs []job
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() || e.Name() == remoteIndexCacheDir {
			continue
		}
		tp, kind, err := parseTopicPartitionName(e.Name())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if tp.topic == metadataTopic {
			continue
		}
		jobs = append(jobs, job{path, kind, tp})
	}
	var logs []*Log
	seen := map[topicPartition]string{}
	for _, j := range jobs {
		l, err := LoadPartition(j.path, Options{HadCleanShutdown: clean, RecoveryPoint: recovery[j.tp], LogStartOffset: logStart[j.tp]})
		if err != nil {
			return nil, err
		}
		l.Topic, l.Partition, l.Kind = j.tp.topic, j.tp.partition, j.kind
		if j.kind == "" || j.kind == "future" {
			key := j.tp
			if j.kind == "future" {
				key.topic += "\x00future"
			}
			if first, ok := seen[key]; ok {
				return nil, fmt.Errorf("duplicate log directories for %s-%d: %s and %s", j.tp.topic, j.tp.partition, first, j.path)
			}
			seen[key] = j.path
		}
		logs = append(logs, l)
	}
	return logs, nil
}

type topicPartition struct {
	topic     string
	partition int32
}

// parseTopicPartitionName is LocalLog.parseTopicPartitionName, with the
// kind of a renamed directory.
func parseTopicPartitionName(name string) (topicPartition, string, error) {
	bad := fmt.Errorf("%q is not in the form of topic-partition or topic-partition.uniqueId-delete: Kafka refuses to start", name)
	if name == "" || !strings.Contains(name, "-") {
		return topicPartition{}, "", bad
	}
	kind := ""
	for _, suffix := range []string{deleteDirSuffix, futureDirSuffix, strayDirSuffix} {
		if strings.HasSuffix(name, suffix) {
			if !dirPatterns[suffix].MatchString(name) {
				return topicPartition{}, "", bad
			}
			kind = suffix[1:]
			name = name[:strings.LastIndexByte(name, '.')]
			break
		}
	}
	i := strings.LastIndexByte(name, '-')
	topic, part := name[:i], name[i+1:]
	if topic == "" || part == "" {
		return topicPartition{}, "", bad
	}
	// Integer.parseInt: an optional sign, decimal digits, 32 bits.
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil {
		return topicPartition{}, "", bad
	}
	return topicPartition{topic, int32(p)}, kind, nil
}

// readCheckpoint reads an offset checkpoint as LogManager does: any error
// gives an empty map (Kafka warns and goes on from 0).
func readCheckpoint(path string) map[topicPartition]int64 {
	out := map[topicPartition]int64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if sc.Err() != nil || len(lines) == 0 {
		return out
	}
	if lines[0] != "0" {
		return map[topicPartition]int64{}
	}
	if len(lines) == 1 {
		return out
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return map[topicPartition]int64{}
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return map[topicPartition]int64{}
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return map[topicPartition]int64{}
		}
		out[topicPartition{f[0], int32(p)}] = off
	}
	return out
}

// Partitions returns the logs a broker serves: those of kind "".
func Partitions(logs []*Log) []*Log {
	return slices.DeleteFunc(slices.Clone(logs), func(l *Log) bool { return l.Kind != "" })
}
