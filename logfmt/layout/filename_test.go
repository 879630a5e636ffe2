package layout

import (
	"strings"
	"testing"
)

func TestSegmentName(t *testing.T) {
	for _, tc := range []struct {
		base int64
		ext  string
		want string
	}{
		{0, LogExt, "00000000000000000000.log"},
		{14, ".log", "00000000000000000014.log"},
		{123456789, TimeIndexExt, "00000000000123456789.timeindex"},
		{9223372036854775807, IndexExt + SwapSuffix, "09223372036854775807.index.swap"},
	} {
		if got := SegmentName(tc.base, tc.ext); got != tc.want {
			t.Errorf("SegmentName(%d, %q) = %q, want %q", tc.base, tc.ext, got, tc.want)
		}
	}
}

func TestParseFileName(t *testing.T) {
	fixed := func(k FileKind) FileName { return FileName{Kind: k, Base: -1, Epoch: -1} }
	seg := func(k FileKind, base int64, leftover string) FileName {
		return FileName{Kind: k, Base: base, Epoch: -1, Leftover: leftover}
	}
	kraft := func(base int64, epoch int32, leftover string) FileName {
		return FileName{Kind: KRaftSnapshot, Base: base, Epoch: epoch, Leftover: leftover}
	}
	unknown := fixed(Unknown)
	for _, tc := range []struct {
		name string
		want FileName
	}{
		{"00000000000000000000.log", seg(Log, 0, "")},
		{"00000000000000000014.index", seg(Index, 14, "")},
		{"00000000000000000014.timeindex", seg(TimeIndex, 14, "")},
		{"00000000000000000014.txnindex", seg(TxnIndex, 14, "")},
		{"00000000000000066046.snapshot", seg(Snapshot, 66046, "")},
		{"09223372036854775807.log", seg(Log, 9223372036854775807, "")},
		{"00000000000000000000.log.swap", seg(Log, 0, SwapSuffix)},
		{"00000000000000000000.log.cleaned", seg(Log, 0, CleanedSuffix)},
		{"00000000000000000000.log.deleted", seg(Log, 0, DeletedSuffix)},
		{"00000000000000000007.index.deleted", seg(Index, 7, DeletedSuffix)},
		{"00000000000000000007.timeindex.swap", seg(TimeIndex, 7, SwapSuffix)},
		{"00000000000000000007.txnindex.cleaned", seg(TxnIndex, 7, CleanedSuffix)},
		{"00000000000000000007.snapshot.deleted", seg(Snapshot, 7, DeletedSuffix)},
		{"00000000000000007364-0000000001.checkpoint", kraft(7364, 1, "")},
		{"00000000000000060500-0000000025.checkpoint", kraft(60500, 25, "")},
		{"00000000000000060500-2147483647.checkpoint.deleted", kraft(60500, 2147483647, DeletedSuffix)},
		{"00000000000000060500-0000000025-8812345678901234.checkpoint.part", kraft(60500, 25, PartSuffix)},

		{"leader-epoch-checkpoint", fixed(LeaderEpochCheckpoint)},
		{"partition.metadata", fixed(PartitionMetadata)},
		{"cleaner-checkpoint", fixed(CleanerCheckpoint)},
		{"quorum-state", fixed(QuorumState)},
		{"recovery-point-offset-checkpoint", fixed(RecoveryPointCheckpoint)},
		{"log-start-offset-checkpoint", fixed(LogStartOffsetCheckpoint)},
		{"replication-offset-checkpoint", fixed(ReplicationOffsetCheckpoint)},
		{"cleaner-offset-checkpoint", fixed(CleanerOffsetCheckpoint)},
		{"meta.properties", fixed(MetaProperties)},
		{"bootstrap.checkpoint", fixed(BootstrapCheckpoint)},
		{".lock", fixed(Lock)},
		{".kafka_cleanshutdown", fixed(CleanShutdown)},
		{"meta.properties.tmp", fixed(Temp)},
		{"00000000000000000000.index.tmp", fixed(Temp)},

		{"", unknown},
		{".DS_Store", unknown},
		{"14.log", unknown},                                     // not 20 digits
		{"000000000000000000014.log", unknown},                  // 21 digits
		{"99999999999999999999.log", unknown},                   // beyond int64
		{"00000000000000000000.LOG", unknown},                   // case matters
		{"00000000000000000000.log.swap.deleted", unknown},      // two leftover suffixes
		{"00000000000000000000.log.bak", unknown},               // unknown suffix
		{"00000000000000000000", unknown},                       // no extension
		{"0000000000000000000a.log", unknown},                   // not digits
		{"00000000000000000000.checkpoint", unknown},            // KRaft snapshot without epoch
		{"00000000000000000000-1.checkpoint", unknown},          // epoch not 10 digits
		{"00000000000000000000-9999999999.checkpoint", unknown}, // epoch beyond int32
		{"00000000000000000000-0000000001.checkpoint.swap", unknown},
		{"00000000000000000000-0000000001-.checkpoint.part", unknown},
		{"00000000000000000000-0000000001.log", unknown},
		{"cleaner-offset-checkpoint.migrated", unknown},
		{"leader-epoch-checkpoint.deleted", unknown},
	} {
		if got := ParseFileName(tc.name); got != tc.want {
			t.Errorf("ParseFileName(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestFileKindString(t *testing.T) {
	seen := map[string]FileKind{}
	for k := Unknown; k <= Temp; k++ {
		s := k.String()
		if s == "" {
			t.Errorf("FileKind(%d) has no name", int(k))
		}
		if prev, dup := seen[s]; dup {
			t.Errorf("FileKind(%d) and FileKind(%d) are both %q", int(prev), int(k), s)
		}
		seen[s] = k
	}
	if got := FileKind(-1).String(); got != "FileKind(-1)" {
		t.Errorf("FileKind(-1).String() = %q", got)
	}
}

// TestFileKindPlace pins which kinds count as log-dir root files and which as
// partition files, since Classify and LogDirOf rest on it.
func TestFileKindPlace(t *testing.T) {
	root := map[FileKind]bool{RecoveryPointCheckpoint: true, LogStartOffsetCheckpoint: true, ReplicationOffsetCheckpoint: true,
		CleanerOffsetCheckpoint: true, MetaProperties: true, BootstrapCheckpoint: true, Lock: true, CleanShutdown: true}
	partition := map[FileKind]bool{Log: true, Index: true, TimeIndex: true, TxnIndex: true, Snapshot: true, KRaftSnapshot: true,
		LeaderEpochCheckpoint: true, PartitionMetadata: true, CleanerCheckpoint: true, QuorumState: true}
	for k := Unknown; k <= Temp; k++ {
		if k.atRoot() != root[k] || k.inPartition() != partition[k] {
			t.Errorf("%v: atRoot=%v inPartition=%v, want %v %v", k, k.atRoot(), k.inPartition(), root[k], partition[k])
		}
	}
}

// TestOwnTemp: logtool's own temporary files, which a writer removes after
// a crash, and every other "<name>.tmp" (the broker's, a user's, an earlier
// logtool's), which it never touches.
func TestOwnTemp(t *testing.T) {
	for name, want := range map[string]bool{
		"00000000000000000000.log.cleaned.tmp":           false,
		"00000000000000000000.index.tmp":                 false,
		"00000000000000000100.timeindex.cleaned.tmp":     false,
		"00000000000000000000.txnindex.swap.tmp":         false,
		"00000000000000000000.log.truncated-4096.tmp":    false,
		"cleaner-checkpoint.tmp":                         false,
		"cleaner-offset-checkpoint.migrated.tmp":         false,
		"recovery-point-offset-checkpoint.logtool.tmp":   true,
		"cleaner-checkpoint.logtool.tmp":                 true,
		"cleaner-offset-checkpoint.tmp":                  false,
		"recovery-point-offset-checkpoint.tmp":           false,
		"replication-offset-checkpoint.tmp":              false,
		"log-start-offset-checkpoint.tmp":                false,
		"leader-epoch-checkpoint.tmp":                    false,
		"partition.metadata.tmp":                         false,
		"quorum-state.tmp":                               false,
		"00000000000000000000.log.cleaned":               false,
		"00000000000000000000.snapshot.tmp":              false,
		"notes.tmp":                                      false,
		"notes.txt.logtool.tmp":                          true,
		"00000000000000000000.snapshot.logtool.tmp":      true,
		"leader-epoch-checkpoint.logtool.tmp":            true,
		"00000000000000000000-0000000001.checkpoint.tmp": false,
	} {
		if got := OwnTemp(name); got != want {
			t.Errorf("OwnTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestBrokerRefusal: the names a broker's load fails on, from LogLoader and
// LogFileUtils.offsetFromFileName (Long.parseLong up to the first '.').
func TestBrokerRefusal(t *testing.T) {
	logs := map[string]bool{"00000000000000000000.log": true}
	exists := func(name string) bool { return logs[name] }
	for _, tc := range []struct {
		name  string
		isDir bool
		want  string // in the answer; "" for none
	}{
		{"99999999999999999999.log", false, "NumberFormatException"},
		{"notes.timeindex", false, `Long.parseLong("notes")`},
		{"x.log.swap", false, "NumberFormatException"},
		{"00000000000000000000.log", false, ""},
		{"14.log", false, "opens (or creates, empty) 00000000000000000014.log in its place"},
		{"+0000000000000000100.index", false, "offset 100, deleting it at load unless 00000000000000000100.log exists"},
		{"notes.txt", false, ""},
		{"00000000000000000000.log.deleted", false, ""},
		{"00000000000000000000.index", true, "opens it as that file when it loads the segment"},
		{"00000000000000000500.index", true, "skips it when loading"},
		{"00000000000000000500.log", true, "skips it when loading"},
		{"99999999999999999999.log", true, ""},
		{"backup", true, ""},
	} {
		got := BrokerRefusal(tc.name, tc.isDir, exists)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("BrokerRefusal(%q, dir %v) = %q, want %q", tc.name, tc.isDir, got, tc.want)
		}
	}
}
