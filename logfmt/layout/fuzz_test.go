package layout

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParsePartitionDir checks that any name parses without panicking into
// something self-consistent, and that every valid topic and partition
// survives PartitionDirName and back.
func FuzzParsePartitionDir(f *testing.F) {
	for _, s := range []string{
		"foo-0", "__consumer_offsets-49", "Retry.TestTopicPatient-0", "a-b-c-2147483647", "foo--1", "foo-007",
		"my.topic-3.0123456789abcdef0123456789abcdef-delete", "t-1.x-future", "t-12.y-stray",
		"foo", "foo-", "-0", "foo-+1", "foo-0.-delete", "foo-0.a.b-stray", "lost+found", ".-0", "-delete",
	} {
		f.Add(s, int32(len(s)))
	}
	f.Fuzz(func(t *testing.T, name string, partition int32) {
		pd, err := ParsePartitionDir(name)
		if err != nil {
			if !errors.Is(err, ErrNotPartitionDir) {
				t.Fatalf("ParsePartitionDir(%q): error %v does not wrap ErrNotPartitionDir", name, err)
			}
		} else {
			if pd.Name != name || pd.Partition < 0 || ValidateTopic(pd.Topic) != nil {
				t.Fatalf("ParsePartitionDir(%q) = %+v", name, pd)
			}
			// The name is the parts put back together; only the partition's
			// spelling may differ, by leading zeros.
			suffix := ""
			if pd.Kind != Normal {
				suffix = "." + pd.UniqueID + dirSuffixes[pd.Kind]
			} else if pd.UniqueID != "" {
				t.Fatalf("ParsePartitionDir(%q) = %+v: unique id in a normal name", name, pd)
			}
			digits, ok := strings.CutPrefix(name, pd.Topic+"-")
			if ok {
				digits, ok = strings.CutSuffix(digits, suffix)
			}
			n, err := strconv.ParseInt(digits, 10, 32)
			if !ok || err != nil || !allDigits(digits) || int32(n) != pd.Partition {
				t.Fatalf("ParsePartitionDir(%q) = %+v, which does not rebuild the name", name, pd)
			}
		}

		if ValidateTopic(name) != nil || partition < 0 {
			return
		}
		dn := PartitionDirName(name, partition)
		pd, err = ParsePartitionDir(dn)
		if err != nil || pd != (PartitionDir{Topic: name, Partition: partition, Name: dn}) {
			t.Fatalf("ParsePartitionDir(PartitionDirName(%q, %d)) = %+v, %v", name, partition, pd, err)
		}
	})
}

// FuzzParseFileName checks that any name parses without panicking, and that
// every name with an offset is exactly the name Kafka would write for what
// was parsed.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{
		"00000000000000000000.log", "00000000000000000014.index", "00000000000000000014.timeindex.swap",
		"00000000000000000007.txnindex.cleaned", "00000000000000066046.snapshot.deleted", "09223372036854775807.log",
		"00000000000000007364-0000000001.checkpoint", "00000000000000060500-0000000025.checkpoint.deleted",
		"00000000000000060500-0000000025-12345.checkpoint.part", "leader-epoch-checkpoint", "meta.properties",
		".lock", ".kafka_cleanshutdown", "x.tmp", "14.log", "99999999999999999999.log", "00000000000000000000-9999999999.checkpoint",
		"00000000000000000000.log.swap.deleted", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fn := ParseFileName(name)
		switch fn.Kind {
		case Log, Index, TimeIndex, TxnIndex, Snapshot:
			if fn.Base < 0 || fn.Epoch != -1 {
				t.Fatalf("ParseFileName(%q) = %+v", name, fn)
			}
			if got := SegmentName(fn.Base, extOf(fn.Kind)+fn.Leftover); got != name {
				t.Fatalf("ParseFileName(%q) = %+v, which names %q", name, fn, got)
			}
		case KRaftSnapshot:
			if fn.Base < 0 || fn.Epoch < 0 {
				t.Fatalf("ParseFileName(%q) = %+v", name, fn)
			}
			prefix := SegmentName(fn.Base, "-") + strings.Repeat("0", 10-len(strconv.Itoa(int(fn.Epoch)))) + strconv.Itoa(int(fn.Epoch))
			var ok bool
			switch fn.Leftover {
			case "":
				ok = name == prefix+CheckpointExt
			case DeletedSuffix:
				ok = name == prefix+CheckpointExt+DeletedSuffix
			case PartSuffix:
				ok = strings.HasPrefix(name, prefix+"-") && strings.HasSuffix(name, CheckpointExt+PartSuffix)
			}
			if !ok {
				t.Fatalf("ParseFileName(%q) = %+v", name, fn)
			}
		default:
			if fn.Base != -1 || fn.Epoch != -1 || fn.Leftover != "" {
				t.Fatalf("ParseFileName(%q) = %+v", name, fn)
			}
		}
	})
}

func extOf(k FileKind) string {
	for ext, kind := range offsetExts {
		if kind == k {
			return ext
		}
	}
	return ""
}
