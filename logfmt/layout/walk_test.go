package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
)

var samples = kafkasamples.Dir("logdirs")

// mkTree creates the files (names ending in "/" are directories) under root.
func mkTree(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if n[len(n)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func join(dir string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

func TestReadPartition(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "my.topic-with-dashes-12")
	mkTree(t, dir,
		"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex", "00000000000000000000.txnindex",
		"00000000000000000100.index", "00000000000000000100.timeindex", // index files without their .log
		"00000000000000000200.log",
		"00000000000000000050.snapshot", "00000000000000000010.snapshot",
		"00000000000000000300.log.swap", "00000000000000000300.index.cleaned", "00000000000000000005.snapshot.deleted",
		"leader-epoch-checkpoint", "partition.metadata", "cleaner-checkpoint", "leader-epoch-checkpoint.tmp",
		"garbage.txt", "123.log", "sub/",
	)
	p, err := ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := PartitionDir{Topic: "my.topic-with-dashes", Partition: 12, Name: "my.topic-with-dashes-12"}
	if p.Path != dir || p.Dir != want {
		t.Errorf("Path, Dir = %q, %+v; want %q, %+v", p.Path, p.Dir, dir, want)
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	wantSegs := []Segment{
		{Base: 0, Log: f("00000000000000000000.log"), Index: f("00000000000000000000.index"),
			TimeIndex: f("00000000000000000000.timeindex"), TxnIndex: f("00000000000000000000.txnindex")},
		{Base: 100, Index: f("00000000000000000100.index"), TimeIndex: f("00000000000000000100.timeindex")},
		{Base: 200, Log: f("00000000000000000200.log")},
	}
	if !slices.Equal(p.Segments, wantSegs) {
		t.Errorf("Segments = %+v\nwant %+v", p.Segments, wantSegs)
	}
	check := func(what string, got []string, names ...string) {
		t.Helper()
		if want := join(dir, names...); !slices.Equal(got, want) {
			t.Errorf("%s = %q\nwant %q", what, got, want)
		}
	}
	check("Snapshots", p.Snapshots, "00000000000000000010.snapshot", "00000000000000000050.snapshot")
	check("Leftovers", p.Leftovers, "00000000000000000005.snapshot.deleted", "00000000000000000300.index.cleaned", "00000000000000000300.log.swap")
	check("Others", p.Others, "123.log", "cleaner-checkpoint", "garbage.txt", "leader-epoch-checkpoint", "leader-epoch-checkpoint.tmp",
		"partition.metadata", "sub")
}

func TestReadPartitionRenamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backup")
	mkTree(t, dir, "00000000000000000000.log")
	p, err := ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PartitionDir{Name: "backup", Partition: -1}); p.Dir != want {
		t.Errorf("Dir = %+v, want %+v", p.Dir, want)
	}
	if len(p.Segments) != 1 {
		t.Errorf("Segments = %+v", p.Segments)
	}
	if _, err := ReadPartition(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadPartition of a missing directory = %v", err)
	}
}

func TestReadLogDir(t *testing.T) {
	const uid = "0123456789abcdef0123456789abcdef"
	root := t.TempDir()
	mkTree(t, root,
		"meta.properties", "recovery-point-offset-checkpoint", ".lock", ".kafka_cleanshutdown", "stray-file.txt",
		"my.topic-with-dashes-12/00000000000000000000.log",
		"my.topic-with-dashes-2/00000000000000000000.log",
		"foo-0."+uid+"-delete/00000000000000000000.log",
		"foo-0."+uid+"-future/00000000000000000000.log",
		"foo-0/00000000000000000000.log",
		"foo-0.aaaa-future/",
		"bar-3."+uid+"-stray/",
		"lost+found/", "notapartition/", "foo-x/",
	)
	// A symbolic link to a partition directory is listed as a link, never
	// followed: the partition lives outside the log directory.
	if err := os.Symlink(filepath.Join(root, "foo-0"), filepath.Join(root, "linked-1")); err != nil {
		t.Fatal(err)
	}
	ld, err := ReadLogDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ld.Partitions {
		names = append(names, p.Dir.Name)
		if p.Path != filepath.Join(root, p.Dir.Name) {
			t.Errorf("partition %s has Path %q", p.Dir.Name, p.Path)
		}
	}
	wantNames := []string{
		"bar-3." + uid + "-stray",
		"foo-0",
		"foo-0." + uid + "-delete",
		"foo-0." + uid + "-future",
		"foo-0.aaaa-future",
		"my.topic-with-dashes-2",
		"my.topic-with-dashes-12",
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("partitions = %q\nwant %q", names, wantNames)
	}
	if got, want := ld.RootFiles, join(root, ".kafka_cleanshutdown", ".lock", "meta.properties", "recovery-point-offset-checkpoint", "stray-file.txt"); !slices.Equal(got, want) {
		t.Errorf("RootFiles = %q\nwant %q", got, want)
	}
	if got, want := ld.NotPartitions, join(root, "foo-x", "lost+found", "notapartition"); !slices.Equal(got, want) {
		t.Errorf("NotPartitions = %q\nwant %q", got, want)
	}
	if got, want := ld.Symlinks, join(root, "linked-1"); !slices.Equal(got, want) {
		t.Errorf("Symlinks = %q\nwant %q", got, want)
	}
}

// TestReadPartitionSymlinks: a segment, index, time index or checkpoint that
// is a symbolic link is listed as a link only, never as what its name says,
// dangling or not.
func TestReadPartitionSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	dir := filepath.Join(root, "orders-0")
	mkTree(t, root, "outside/a.log", "outside/a.index", "outside/sub/",
		"orders-0/00000000000000000000.log", "orders-0/00000000000000000000.index")
	links := map[string]string{
		"00000000000000000000.timeindex": "a.index",
		"00000000000000000100.log":       "a.log",
		"00000000000000000100.index":     "a.index",
		"leader-epoch-checkpoint":        "a.log",
		"00000000000000000100.snapshot":  "gone",
		"sub":                            "sub",
	}
	for name, to := range links {
		if err := os.Symlink(filepath.Join(outside, to), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{Base: 0, Log: filepath.Join(dir, "00000000000000000000.log"), Index: filepath.Join(dir, "00000000000000000000.index")}}
	if !slices.Equal(p.Segments, want) || len(p.Snapshots)+len(p.Others)+len(p.Irregular)+len(p.Leftovers) != 0 {
		t.Errorf("links listed as files: %+v", p)
	}
	if got, want := p.Symlinks, join(dir, "00000000000000000000.timeindex", "00000000000000000100.index", "00000000000000000100.log",
		"00000000000000000100.snapshot", "leader-epoch-checkpoint", "sub"); !slices.Equal(got, want) {
		t.Errorf("Symlinks = %q\nwant %q", got, want)
	}
	if err := p.NoSymlinks(); !errors.Is(err, ErrSymlinks) {
		t.Errorf("NoSymlinks: %v", err)
	}
	// Links a broker does not load are no reason to refuse a partition.
	p.Symlinks = join(dir, "sub", "00000000000000000000.index.tmp", "cleaner-checkpoint.logtool.tmp")
	if err := p.NoSymlinks(); err != nil {
		t.Errorf("NoSymlinks with links under other names: %v", err)
	}
}

func TestClassify(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root,
		"logs/meta.properties", "logs/t-0/00000000000000000000.log",
		"kafka-logs-1/recovery-point-offset-checkpoint", // a log dir named like a partition
		"only-partitions/t-0/", "only-partitions/t-1/",
		"empty-0/",
		"backup/00000000000000000000.index",
		"kraft/__cluster_metadata-0/quorum-state",
		"mixed/meta.properties", "mixed/00000000000000000000.log",
		"random/notes.txt",
		"emptydir/",
	)
	for _, tc := range []struct {
		path string
		want PathKind
	}{
		{"logs", KindLogDir},
		{"logs/meta.properties", KindFile},
		{"logs/t-0", KindPartitionDir},
		{"logs/t-0/00000000000000000000.log", KindFile},
		{"kafka-logs-1", KindLogDir},
		{"only-partitions", KindLogDir},
		{"empty-0", KindPartitionDir},
		{"backup", KindPartitionDir},
		{"kraft/__cluster_metadata-0", KindPartitionDir},
		{"kraft", KindLogDir},
	} {
		got, err := Classify(filepath.Join(root, tc.path))
		if err != nil || got != tc.want {
			t.Errorf("Classify(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	for _, p := range []string{"mixed", "random", "emptydir"} {
		path := filepath.Join(root, p)
		if _, err := Classify(path); !errors.Is(err, ErrUnrecognizedPath) {
			t.Errorf("Classify(%s) = %v, want ErrUnrecognizedPath", p, err)
		} else if !containsPath(err, path) {
			t.Errorf("Classify(%s) error %q does not name the path", p, err)
		}
	}
	if _, err := Classify(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Classify(missing) = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		if _, err := Classify("/dev/null"); !errors.Is(err, ErrUnrecognizedPath) {
			t.Errorf("Classify(/dev/null) = %v, want ErrUnrecognizedPath", err)
		}
	}

	// "." is judged by the directory's real name.
	t.Chdir(filepath.Join(root, "empty-0"))
	if got, err := Classify("."); err != nil || got != KindPartitionDir {
		t.Errorf(`Classify(".") in empty-0 = %v, %v`, got, err)
	}
}

func containsPath(err error, path string) bool {
	s := err.Error()
	return len(s) >= len(path) && s[:len(path)] == path
}

func TestLogDirOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		kind PathKind
		want string
	}{
		{"/data/kafka", KindLogDir, "/data/kafka"},
		{"/data/kafka/", KindLogDir, "/data/kafka"},
		{"/data/kafka/t-0", KindPartitionDir, "/data/kafka"},
		{"/data/kafka/t-0/00000000000000000000.log", KindFile, "/data/kafka"},
		{"/data/kafka/t-0/leader-epoch-checkpoint", KindFile, "/data/kafka"},
		{"/data/kafka/meta.properties", KindFile, "/data/kafka"},
		{"/data/kafka/recovery-point-offset-checkpoint.tmp", KindFile, "/data/kafka"},
		{"/data/kafka/.kafka_cleanshutdown", KindFile, "/data/kafka"},
		{"t-0", KindPartitionDir, "."},
		{".", KindPartitionDir, ".."},
		{"00000000000000000000.log", KindFile, ".."},
		{"t-0/00000000000000000000.log", KindFile, "."},
		{"meta.properties", KindFile, "."},
	} {
		if got := LogDirOf(filepath.FromSlash(tc.path), tc.kind); got != filepath.FromSlash(tc.want) {
			t.Errorf("LogDirOf(%q, %v) = %q, want %q", tc.path, tc.kind, got, tc.want)
		}
	}
}

// TestSamples reads every log directory written by real brokers.
func TestSamples(t *testing.T) {
	dirs, err := os.ReadDir(samples)
	if errors.Is(err, fs.ErrNotExist) {
		kafkasamples.Skip(t, fmt.Errorf("broker samples not found at %s", samples))
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		t.Run(d.Name(), func(t *testing.T) { checkSample(t, filepath.Join(samples, d.Name())) })
	}
	if n == 0 {
		t.Fatalf("no log directories in %s", samples)
	}
}

func checkSample(t *testing.T, dir string) {
	if k, err := Classify(dir); err != nil || k != KindLogDir {
		t.Fatalf("Classify = %v, %v; want log directory", k, err)
	}
	ld, err := ReadLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.NotPartitions) != 0 {
		t.Errorf("NotPartitions = %q", ld.NotPartitions)
	}
	if len(ld.Partitions) == 0 {
		t.Errorf("no partitions")
	}
	for _, f := range ld.RootFiles {
		fn := ParseFileName(filepath.Base(f))
		if !fn.Kind.atRoot() {
			t.Errorf("root file %s parsed as %+v", filepath.Base(f), fn)
		}
		if got := LogDirOf(f, KindFile); got != filepath.Clean(dir) {
			t.Errorf("LogDirOf(%s) = %s", f, got)
		}
	}
	for i, p := range ld.Partitions {
		if i > 0 {
			prev := ld.Partitions[i-1].Dir
			if prev.Topic > p.Dir.Topic || prev.Topic == p.Dir.Topic && prev.Partition >= p.Dir.Partition {
				t.Errorf("partitions out of order: %s before %s", prev.Name, p.Dir.Name)
			}
		}
		if p.Dir.Topic == "" || p.Dir.Kind != Normal {
			t.Errorf("%s: Dir = %+v", p.Path, p.Dir)
		}
		if k, err := Classify(p.Path); err != nil || k != KindPartitionDir {
			t.Errorf("Classify(%s) = %v, %v", p.Path, k, err)
		}
		if got := LogDirOf(p.Path, KindPartitionDir); got != filepath.Clean(dir) {
			t.Errorf("LogDirOf(%s) = %s", p.Path, got)
		}
		if len(p.Leftovers) != 0 {
			t.Errorf("%s: Leftovers = %q", p.Path, p.Leftovers)
		}
		for _, s := range p.Segments {
			if s.Log == "" && p.Dir.Topic != "__cluster_metadata" {
				t.Errorf("%s: segment %d has no .log", p.Path, s.Base)
			}
			for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" && ParseFileName(filepath.Base(f)).Base != s.Base {
					t.Errorf("%s in segment %d", f, s.Base)
				}
			}
		}
		for _, f := range p.Others {
			fn := ParseFileName(filepath.Base(f))
			switch {
			case fn.Kind == KRaftSnapshot:
				if p.Dir.Topic != "__cluster_metadata" {
					t.Errorf("KRaft snapshot %s outside __cluster_metadata", f)
				}
			case fn.Kind == Unknown && filepath.Base(f) == ".DS_Store": // copied from a Mac
			case !fn.Kind.inPartition():
				t.Errorf("%s: unexpected file %s (%+v)", p.Path, filepath.Base(f), fn)
			}
			if k, err := Classify(f); err != nil || k != KindFile {
				t.Errorf("Classify(%s) = %v, %v", f, k, err)
			}
			if got := LogDirOf(f, KindFile); got != filepath.Clean(dir) {
				t.Errorf("LogDirOf(%s) = %s", f, got)
			}
		}
	}
}

// TestSampleDetails pins what particular sample directories hold.
func TestSampleDetails(t *testing.T) {
	read := func(name string) *LogDir {
		t.Helper()
		ld, err := ReadLogDir(filepath.Join(samples, name))
		if errors.Is(err, fs.ErrNotExist) {
			kafkasamples.Skip(t, fmt.Errorf("broker samples not found at %s", samples))
		}
		if err != nil {
			t.Fatal(err)
		}
		return ld
	}
	find := func(ld *LogDir, name string) *Partition {
		t.Helper()
		for _, p := range ld.Partitions {
			if p.Dir.Name == name {
				return p
			}
		}
		t.Fatalf("%s: no partition %s", ld.Path, name)
		return nil
	}

	// KRaft metadata partition with snapshots, index files but no log.
	ld := read("itumelengmogase_kraft-ksqldb-txn")
	meta := find(ld, "__cluster_metadata-0")
	if len(meta.Segments) != 1 || meta.Segments[0].Log != "" || meta.Segments[0].Index == "" || meta.Segments[0].TimeIndex == "" {
		t.Errorf("__cluster_metadata-0 segments = %+v", meta.Segments)
	}
	var kraft []FileName
	for _, f := range meta.Others {
		if fn := ParseFileName(filepath.Base(f)); fn.Kind == KRaftSnapshot {
			kraft = append(kraft, fn)
		}
	}
	wantKraft := []FileName{
		{Kind: KRaftSnapshot, Base: 7364, Epoch: 1},
		{Kind: KRaftSnapshot, Base: 21265, Epoch: 6},
		{Kind: KRaftSnapshot, Base: 60500, Epoch: 25},
	}
	if !slices.Equal(kraft, wantKraft) {
		t.Errorf("KRaft snapshots = %+v", kraft)
	}
	if got := join(meta.Path, "00000000000000053298.snapshot", "00000000000000066046.snapshot"); !slices.Equal(meta.Snapshots, got) {
		t.Errorf("producer snapshots = %q", meta.Snapshots)
	}

	// Topics with dots and dashes; a partition directory with only a .log.
	ld = read("ldi-poc_kafka-3.7.0-kraft")
	var names []string
	for _, p := range ld.Partitions {
		names = append(names, p.Dir.Topic)
	}
	if want := []string{"Retry.TestTopicPatient", "TestTopicPatient", "__cluster_metadata", "__consumer_offsets"}; !slices.Equal(names, want) {
		t.Errorf("topics = %q, want %q", names, want)
	}
	if p := find(ld, "TestTopicPatient-0"); len(p.Segments) != 1 || p.Segments[0].Index != "" || p.Segments[0].Log == "" {
		t.Errorf("TestTopicPatient-0 segments = %+v", p.Segments)
	}

	ld = read("mscaldas2012_cp-5.1.2-lz4")
	p := find(ld, "_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog-0")
	if p.Dir.Topic != "_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog" || p.Dir.Partition != 0 {
		t.Errorf("Dir = %+v", p.Dir)
	}
}

// TestRefusals (issue 36, D): a .log whose name is no 64-bit offset and a
// directory named like an index are what a broker cannot load; segments,
// other directories and unknown names are not.
func TestRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	for _, d := range []string{dir, filepath.Join(dir, "00000000000000000500.index"), filepath.Join(dir, "notes")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"00000000000000000500.log", "99999999999999999999.log", "00000000000000000000.log", "README"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Refusals(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range got {
		paths = append(paths, filepath.Base(r.Path))
		if r.Why == "" || !strings.HasPrefix(r.String(), r.Path+": ") {
			t.Errorf("%+v: no reason", r)
		}
	}
	if want := []string{"00000000000000000500.index", "99999999999999999999.log"}; !slices.Equal(paths, want) {
		t.Errorf("refusals %v, want %v", paths, want)
	}
}
