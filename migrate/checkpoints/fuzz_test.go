package checkpoints

import (
	"bytes"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// FuzzMigrateCheckpoints migrates a log directory whose root file is the
// fuzz input. A file Kafka would reject, or with an entry that is no valid
// topic partition, must stop the run with a CorruptError inside the file and
// nothing written; any other must migrate, write only inside the log
// directory, and come back by reverse with Kafka's reading of its entries.
func FuzzMigrateCheckpoints(f *testing.F) {
	for _, s := range []string{
		"", "0\n0\n", "0\n2\nt 0 5\na.b-c 1 7\n", "0\n3\nt 0 5\nt 0 9\ngone 4 1\n", "0\r\n1\r\nt 1 3\r\n",
		"0\n1\n../outside 0 5\n", "0\n1\nt -1 5\n", "0\n1\nt 0 -5\n", "0\n1\n. 0 5\n", "1\n0\n", "0\n2\nt 0 5\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, root []byte) {
		parent := t.TempDir()
		logs := filepath.Join(parent, "logs")
		ckWrite(t, parent, ckTree{
			"logs/" + ckRoot: string(root),
			"logs/t-0/":      "",
			"logs/a.b-c-1/":  "",
			"logs/notapart/": "",
			"logs/t-1.0123456789abcdef0123456789abcdef-delete/": "",
			"outside-0/": "",
		})
		before := ckSnapshot(t, parent)
		_, err := Migrate(Options{LogDirs: []string{logs}, Workers: 2})
		if err != nil {
			ce, ok := logfmt.AsCorrupt(err)
			if !ok {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			if ce.File != filepath.Join(logs, ckRoot) || ce.Pos < 0 || ce.Pos > int64(len(root)) {
				t.Fatalf("error %v: file %s, position %d outside the %d-byte file", err, ce.File, ce.Pos, len(root))
			}
			ckCheck(t, parent, before)
			return
		}

		after := ckSnapshot(t, parent)
		for name, content := range after {
			if _, ok := before[name]; ok && before[name] == content {
				continue
			}
			if name != "logs/"+MigratedFile && name != "logs/t-0/"+ckCP && name != "logs/a.b-c-1/"+ckCP {
				t.Fatalf("run wrote %s", name)
			}
		}
		entries, err := checkpoint.ReadOffsets(bytes.NewReader(root), "fuzz")
		if err != nil {
			t.Fatalf("migrated a file the reader rejects: %v", err)
		}
		want := map[string]int64{}
		for _, e := range entries {
			if err := layout.ValidateTopic(e.Topic); err != nil || strings.ContainsAny(e.Topic, "/\\") {
				t.Fatalf("migrated an entry with topic %q", e.Topic)
			}
			want[layout.PartitionDirName(e.Topic, e.Partition)] = e.Offset
		}

		ckRun(t, Options{LogDirs: []string{logs}, Reverse: true})
		if got := ckEntries(t, filepath.Join(logs, ckRoot)); !maps.Equal(got, want) {
			t.Fatalf("forward then reverse: %v, want %v", got, want)
		}
	})
}
