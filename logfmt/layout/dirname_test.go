package layout

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateTopic(t *testing.T) {
	long := strings.Repeat("a", MaxTopicLength)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"t", true},
		{"my.topic_with-all.KINDS-09", true},
		{"__consumer_offsets", true},
		{"...", true},
		{"-", true},
		{long, true},
		{long + "a", false},
		{"", false},
		{".", false},
		{"..", false},
		{"a b", false},
		{"a/b", false},
		{"a+b", false},
		{"é", false},
		{"a\x00", false},
	} {
		err := ValidateTopic(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateTopic(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("ValidateTopic(%q) = %v, does not wrap ErrInvalidTopic", tc.name, err)
		}
	}
}

func TestParsePartitionDir(t *testing.T) {
	const uid = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name string
		want PartitionDir // Name is filled in from name
	}{
		{"foo-0", PartitionDir{Topic: "foo", Partition: 0}},
		{"__consumer_offsets-49", PartitionDir{Topic: "__consumer_offsets", Partition: 49}},
		{"__cluster_metadata-0", PartitionDir{Topic: "__cluster_metadata", Partition: 0}},
		{"Retry.TestTopicPatient-0", PartitionDir{Topic: "Retry.TestTopicPatient", Partition: 0}},
		{"_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog-0",
			PartitionDir{Topic: "_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog", Partition: 0}},
		{"a-b-2147483647", PartitionDir{Topic: "a-b", Partition: 2147483647}},
		{"foo--1", PartitionDir{Topic: "foo-", Partition: 1}}, // the last '-' splits, as in Kafka
		{"foo-007", PartitionDir{Topic: "foo", Partition: 7}},
		{"my.topic-3." + uid + "-delete", PartitionDir{Topic: "my.topic", Partition: 3, Kind: Delete, UniqueID: uid}},
		{"my-topic-3." + uid + "-future", PartitionDir{Topic: "my-topic", Partition: 3, Kind: Future, UniqueID: uid}},
		{"t-12." + uid + "-stray", PartitionDir{Topic: "t", Partition: 12, Kind: Stray, UniqueID: uid}},
		{"a.b-1.x-delete", PartitionDir{Topic: "a.b", Partition: 1, Kind: Delete, UniqueID: "x"}},
		{"x-delete-0", PartitionDir{Topic: "x-delete", Partition: 0}},
	} {
		got, err := ParsePartitionDir(tc.name)
		tc.want.Name = tc.name
		if err != nil || got != tc.want {
			t.Errorf("ParsePartitionDir(%q) = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestParsePartitionDirErrors(t *testing.T) {
	for _, name := range []string{
		"",
		"foo",
		"foo-",
		"-0",
		"foo-x",
		"foo-+1",
		"foo-1.5",
		"foo-2147483648",
		"foo-99999999999999999999",
		"lost+found",
		"my topic-0",
		".-0",
		"..-0",
		strings.Repeat("a", MaxTopicLength+1) + "-0",
		"foo-0-delete",     // no unique id
		"foo-0.-delete",    // empty unique id
		"foo-0.a b-delete", // blank in the unique id
		"foo.abc-delete",   // no partition before the id
		"foo-x.abc-future", // partition not a number
		"foo-0.a.b-stray",  // '.' in the id leaves "foo-0.a" as topic-partition
		".0123456789abcdef-delete",
		"-delete",
	} {
		pd, err := ParsePartitionDir(name)
		if err == nil {
			t.Errorf("ParsePartitionDir(%q) = %+v, want an error", name, pd)
			continue
		}
		if !errors.Is(err, ErrNotPartitionDir) || !strings.Contains(err.Error(), "\""+name+"\"") {
			t.Errorf("ParsePartitionDir(%q) error %q does not wrap ErrNotPartitionDir and quote the name", name, err)
		}
	}
}

func TestPartitionDirName(t *testing.T) {
	for _, tc := range []struct {
		topic     string
		partition int32
		want      string
	}{
		{"foo", 0, "foo-0"},
		{"a-b.c", 17, "a-b.c-17"},
		{"t", 2147483647, "t-2147483647"},
	} {
		if got := PartitionDirName(tc.topic, tc.partition); got != tc.want {
			t.Errorf("PartitionDirName(%q, %d) = %q, want %q", tc.topic, tc.partition, got, tc.want)
		}
		pd, err := ParsePartitionDir(tc.want)
		if err != nil || pd.Topic != tc.topic || pd.Partition != tc.partition || pd.Kind != Normal {
			t.Errorf("ParsePartitionDir(%q) = %+v, %v", tc.want, pd, err)
		}
	}
}

func TestDirKindString(t *testing.T) {
	for k, want := range map[DirKind]string{Normal: "normal", Delete: "delete", Future: "future", Stray: "stray", 9: "DirKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("DirKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}
