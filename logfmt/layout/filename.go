package layout

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
)

// Extensions of the files named after an offset.
const (
	LogExt        = ".log"
	IndexExt      = ".index"
	TimeIndexExt  = ".timeindex"
	TxnIndexExt   = ".txnindex"
	SnapshotExt   = ".snapshot"   // producer state
	CheckpointExt = ".checkpoint" // KRaft snapshot
)

// Suffixes Kafka appends to a whole file name while it replaces or deletes
// the file. A broker removes or completes them when it loads the partition,
// so finding one means a cleaning, split or deletion was cut short.
const (
	CleanedSuffix = ".cleaned" // cleaner or split output under construction
	SwapSuffix    = ".swap"    // finished output waiting to replace the originals
	DeletedSuffix = ".deleted" // scheduled for asynchronous deletion
	PartSuffix    = ".part"    // KRaft snapshot being written ("<offset>-<epoch>-<random>.checkpoint.part")
)

// Names of the files with fixed names: the one table of them, for every
// package that opens, writes or recognises one.
const (
	LeaderEpochCheckpointFile       = "leader-epoch-checkpoint"
	PartitionMetadataFile           = "partition.metadata"
	CleanerCheckpointFile           = "cleaner-checkpoint" // logtool's per-partition cleaner checkpoint
	QuorumStateFile                 = "quorum-state"
	RecoveryPointCheckpointFile     = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointFile    = "log-start-offset-checkpoint"
	ReplicationOffsetCheckpointFile = "replication-offset-checkpoint"
	CleanerOffsetCheckpointFile     = "cleaner-offset-checkpoint"
	MetaPropertiesFile              = "meta.properties"
	BootstrapCheckpointFile         = "bootstrap.checkpoint"
	LockFile                        = ".lock"
	CleanShutdownFile               = ".kafka_cleanshutdown"
)

// FileKind is what a file is, judged by its name.
type FileKind int

const (
	Unknown FileKind = iota

	// Named after an offset, in a partition directory.
	Log
	Index
	TimeIndex
	TxnIndex
	Snapshot      // producer state snapshot
	KRaftSnapshot // "<offset>-<epoch>.checkpoint" in __cluster_metadata-0

	// Fixed names in a partition directory.
	LeaderEpochCheckpoint
	PartitionMetadata
	CleanerCheckpoint
	QuorumState

	// Fixed names at the log-dir root.
	RecoveryPointCheckpoint
	LogStartOffsetCheckpoint
	ReplicationOffsetCheckpoint
	CleanerOffsetCheckpoint
	MetaProperties
	BootstrapCheckpoint
	Lock
	CleanShutdown

	// Temp is any name ending in safefile.TempSuffix: a replacement a crash
	// cut short. Nothing reads it and the next write of the same file
	// truncates it.
	Temp
)

var kindNames = [...]string{
	Unknown:                     "unknown",
	Log:                         "log",
	Index:                       "index",
	TimeIndex:                   "timeindex",
	TxnIndex:                    "txnindex",
	Snapshot:                    "snapshot",
	KRaftSnapshot:               "kraft-snapshot",
	LeaderEpochCheckpoint:       LeaderEpochCheckpointFile,
	PartitionMetadata:           PartitionMetadataFile,
	CleanerCheckpoint:           CleanerCheckpointFile,
	QuorumState:                 QuorumStateFile,
	RecoveryPointCheckpoint:     RecoveryPointCheckpointFile,
	LogStartOffsetCheckpoint:    LogStartOffsetCheckpointFile,
	ReplicationOffsetCheckpoint: ReplicationOffsetCheckpointFile,
	CleanerOffsetCheckpoint:     CleanerOffsetCheckpointFile,
	MetaProperties:              MetaPropertiesFile,
	BootstrapCheckpoint:         BootstrapCheckpointFile,
	Lock:                        "lock",
	CleanShutdown:               "clean-shutdown",
	Temp:                        "temp",
}

func (k FileKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "FileKind(" + strconv.Itoa(int(k)) + ")"
}

// OwnTemp reports whether name is a temporary file only logtool writes, so
// that a writer may remove it when a crash left it: a name safefile.TempName
// gives ("<name>.logtool.tmp"), which no broker and no person writes. A
// "<name>.tmp" is never logtool's to remove, not even one an earlier version
// wrote through: a broker's checkpoint cut by a crash, a user's copy of a
// segment, and such a leftover look alike, and a leftover is harmless.
func OwnTemp(name string) bool {
	return strings.HasSuffix(name, safefile.OwnTempSuffix)
}

// OwnRootTemp is OwnTemp at the root of a log directory, where logtool's
// earlier "<name>.tmp" was only ever the .migrated root file's: a segment's
// or a cleaner-checkpoint's temporary name there is someone else's file.
func OwnRootTemp(name string) bool {
	return strings.HasSuffix(name, safefile.OwnTempSuffix) || name == CleanerOffsetCheckpointFile+".migrated"+safefile.TempSuffix
}

// atRoot reports whether files of kind k live at the log-dir root.
func (k FileKind) atRoot() bool { return k >= RecoveryPointCheckpoint && k <= CleanShutdown }

// inPartition reports whether files of kind k live in a partition directory.
func (k FileKind) inPartition() bool { return k >= Log && k <= QuorumState }

var fixedNames = map[string]FileKind{
	LeaderEpochCheckpointFile:       LeaderEpochCheckpoint,
	PartitionMetadataFile:           PartitionMetadata,
	CleanerCheckpointFile:           CleanerCheckpoint,
	QuorumStateFile:                 QuorumState,
	RecoveryPointCheckpointFile:     RecoveryPointCheckpoint,
	LogStartOffsetCheckpointFile:    LogStartOffsetCheckpoint,
	ReplicationOffsetCheckpointFile: ReplicationOffsetCheckpoint,
	CleanerOffsetCheckpointFile:     CleanerOffsetCheckpoint,
	MetaPropertiesFile:              MetaProperties,
	BootstrapCheckpointFile:         BootstrapCheckpoint,
	LockFile:                        Lock,
	CleanShutdownFile:               CleanShutdown,
}

var offsetExts = map[string]FileKind{
	LogExt:       Log,
	IndexExt:     Index,
	TimeIndexExt: TimeIndex,
	TxnIndexExt:  TxnIndex,
	SnapshotExt:  Snapshot,
}

// FileName is what a file's name says.
type FileName struct {
	Kind     FileKind
	Base     int64  // the offset in the name (a KRaft snapshot's end offset); -1 for other kinds
	Epoch    int32  // a KRaft snapshot's epoch; -1 for other kinds
	Leftover string // "", CleanedSuffix, SwapSuffix, DeletedSuffix or PartSuffix
}

const (
	offsetWidth = 20 // digits of an offset in a file name (LogFileUtils.filenamePrefixFromOffset)
	epochWidth  = 10 // digits of a KRaft snapshot's epoch (Snapshots.EPOCH_WIDTH)
)

// SegmentName returns the name of the file with extension ext (LogExt,
// IndexExt, ...; with a leftover suffix if wanted) for base offset base ≥ 0:
// SegmentName(14, ".log") is "00000000000000000014.log".
func SegmentName(base int64, ext string) string {
	return fmt.Sprintf("%0*d%s", offsetWidth, base, ext)
}

// ParseFileName says what a file is from its base name. It never fails:
// names it does not know are Unknown.
//
// An offset must be written as Kafka writes it, exactly 20 digits. Kafka's
// loader would also take "14.log" (it parses up to the first '.'), but no
// broker writes such a name and logtool reports it rather than guess.
func ParseFileName(name string) FileName {
	unknown := FileName{Kind: Unknown, Base: -1, Epoch: -1}
	if k, ok := fixedNames[name]; ok {
		return FileName{Kind: k, Base: -1, Epoch: -1}
	}
	if strings.HasSuffix(name, safefile.TempSuffix) {
		return FileName{Kind: Temp, Base: -1, Epoch: -1}
	}
	if len(name) < offsetWidth || !allDigits(name[:offsetWidth]) {
		return unknown
	}
	base, err := strconv.ParseInt(name[:offsetWidth], 10, 64)
	if err != nil {
		return unknown
	}
	rest := name[offsetWidth:]
	if strings.HasPrefix(rest, "-") {
		fn, ok := parseKRaftSnapshot(rest[1:])
		if !ok {
			return unknown
		}
		fn.Base = base
		return fn
	}
	fn := FileName{Base: base, Epoch: -1}
	for _, s := range [...]string{CleanedSuffix, SwapSuffix, DeletedSuffix} {
		if strings.HasSuffix(rest, s) {
			fn.Leftover = s
			rest = rest[:len(rest)-len(s)]
			break
		}
	}
	k, ok := offsetExts[rest]
	if !ok {
		return unknown
	}
	fn.Kind = k
	return fn
}

// parseKRaftSnapshot parses what follows "<offset>-" in a KRaft snapshot
// name: "<epoch>.checkpoint", "<epoch>.checkpoint.deleted", or
// "<epoch>-<random>.checkpoint.part" for one being written.
func parseKRaftSnapshot(s string) (FileName, bool) {
	if len(s) < epochWidth || !allDigits(s[:epochWidth]) {
		return FileName{}, false
	}
	epoch, err := strconv.ParseInt(s[:epochWidth], 10, 32)
	if err != nil {
		return FileName{}, false
	}
	fn := FileName{Kind: KRaftSnapshot, Epoch: int32(epoch)}
	switch rest := s[epochWidth:]; {
	case rest == CheckpointExt:
	case rest == CheckpointExt+DeletedSuffix:
		fn.Leftover = DeletedSuffix
	case strings.HasPrefix(rest, "-") && len(rest) > 1+len(CheckpointExt+PartSuffix) && strings.HasSuffix(rest, CheckpointExt+PartSuffix):
		fn.Leftover = PartSuffix
	default:
		return FileName{}, false
	}
	return fn, true
}

// BrokerRefusal says what a broker does when it loads a partition directory
// holding an entry named name (isDir: the entry is a directory) that is not
// a segment file, where that stops the load or does not keep the entry
// for what it holds; "" when a broker ignores the entry, or removes it as
// a leftover of its own. The rules are LogLoader's (Kafka 3.x and 4.x):
//
//   - A regular file whose name ends in .log, .index, .timeindex, .txnindex,
//     .cleaned or .swap has its offset taken by LogFileUtils.offsetFromFileName,
//     Long.parseLong of the name up to its first '.'. A prefix that is not a
//     64-bit integer ("99999999999999999999.log", "notes.log") throws
//     NumberFormatException, which is no IOException: LogManager.loadLogs
//     rethrows it and the broker does not start. One that is, but not in
//     Kafka's 20 digits ("+100.log", "14.log"), is taken for that offset's
//     file: a .log loads as that segment, opening or creating the 20-digit
//     file instead; another kind is deleted unless that segment's .log is
//     there. Either way the broker does not keep what the file holds.
//   - A directory is skipped by the listing (File.isFile), but one named like
//     an index of a segment whose .log is there is opened by LogSegment.open
//     as that index, which fails with an IOException: the log directory is
//     marked offline. Named like any other segment file, it breaks the broker
//     as soon as it creates that file (a roll, a recovery).
func BrokerRefusal(name string, isDir bool, exists func(name string) bool) string {
	if isDir {
		fn := ParseFileName(name)
		if fn.Leftover != "" || fn.Kind < Log || fn.Kind > TxnIndex {
			return ""
		}
		if fn.Kind != Log && exists(SegmentName(fn.Base, LogExt)) {
			return fmt.Sprintf("a directory named like the %s of segment %d: a broker opens it as that file when it loads the segment, fails with an IOException and takes the log directory offline", fn.Kind, fn.Base)
		}
		return fmt.Sprintf("a directory named like the %s of segment %d: a broker skips it when loading, but fails with an IOException (log directory offline) as soon as it creates that file", fn.Kind, fn.Base)
	}
	if ParseFileName(name).Kind != Unknown {
		return ""
	}
	switch ext := filepath.Ext(name); ext {
	case LogExt, IndexExt, TimeIndexExt, TxnIndexExt, CleanedSuffix, SwapSuffix:
		prefix, _, _ := strings.Cut(name, ".")
		n, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return fmt.Sprintf("a %s file whose name is no 64-bit offset: a broker's Long.parseLong(%q) throws NumberFormatException when it loads the partition, and the broker does not start", ext, prefix)
		}
		// Long.parseLong takes a sign and any number of digits, as
		// ParseInt does: LogLoader takes the file for offset n's, whose
		// files are named with 20 digits.
		if ext == LogExt {
			return fmt.Sprintf("a .log file named unlike Kafka's: a broker's Long.parseLong(%q) makes it segment %d, and the broker opens (or creates, empty) %s in its place, not this file", prefix, n, SegmentName(n, LogExt))
		}
		return fmt.Sprintf("a %s file named unlike Kafka's: a broker's Long.parseLong(%q) takes it for the file of offset %d, deleting it at load unless %s exists", ext, prefix, n, SegmentName(n, LogExt))
	}
	return ""
}

// BrokerRefusalAt is BrokerRefusal for the entry at path of a partition
// directory, as the file system has it now ("" when it cannot be stat'ed).
func BrokerRefusalAt(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(path)
	return BrokerRefusal(filepath.Base(path), fi.IsDir(), func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	})
}

// StageFile tells whether name is one logtool writes in a staging directory
// (salvage's, upgrade's): a file of a partition directory by Kafka's names,
// or a temporary file of its own. A stage holding anything else is not
// logtool's to remove.
func StageFile(name string) bool {
	return ParseFileName(name).Kind != Unknown || OwnTemp(name) || strings.HasSuffix(name, safefile.TempSuffix)
}

// StageDirName is the staging directory, next to it, of the partition
// directory name that a writer (upgrade --output, gen) builds whole before
// renaming it into place: "<topic>-<partition>.<id><hash>-delete", id
// naming the writer. Kafka's LogManager parses every directory of a log
// directory and refuses to start on a name that is not a partition's; a
// "-delete" name it loads and deletes as the directory of a deleted topic
// (LocalLog.parseTopicPartitionName, LogManager.loadLog), so a stage a crash
// or a full disk leaves behind trips no broker, and the writer's rerun finds
// it by this name. The hash of the whole name keeps the stages of long topic
// names, cut as Kafka cuts them to fit 255 bytes, apart.
func StageDirName(name, id string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf(".%s%08x-delete", id, h.Sum32())
	pd, err := ParsePartitionDir(name)
	if err != nil {
		return name + suffix
	}
	tail := "-" + strconv.Itoa(int(pd.Partition)) + suffix
	return pd.Topic[:min(len(pd.Topic), 255-len(tail))] + tail
}
