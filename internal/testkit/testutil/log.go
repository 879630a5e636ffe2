package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Batch is a magic-2 batch for WriteLog. Its base offset and its records'
// offsets are WriteLog's to set.
type Batch struct {
	Options logfmt.BatchOptions
	Records []logfmt.Record
}

// WriteLog writes the segments of a partition directory, which it creates:
// one .log per slice of batches, offsets following one another from 0.
func WriteLog(t testing.TB, dir string, segments ...[]Batch) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	offset := int64(0)
	for _, seg := range segments {
		var data []byte
		base := offset
		for _, b := range seg {
			o := b.Options
			o.BaseOffset = offset
			recs := make([]logfmt.Record, len(b.Records))
			for i, r := range b.Records {
				r.Offset = offset + int64(i)
				recs[i] = r
			}
			var err error
			if data, err = logfmt.AppendBatch(data, o, recs); err != nil {
				t.Fatal(err)
			}
			offset += int64(len(recs))
		}
		if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(base, ".log")), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BatchAt is where a batch (or legacy entry) of a .log lies.
type BatchAt struct {
	Pos     int64
	Size    int
	Magic   int8
	Control bool
}

// Batches lists the batches of the .log at path, failing t unless the file
// reads to its end cleanly.
func Batches(t testing.TB, path string) []BatchAt {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []BatchAt
	for seg.Next() {
		b := seg.Batch()
		out = append(out, BatchAt{b.Pos, b.Size(), b.Magic(), b.IsControl()})
	}
	if seg.Err() != nil || seg.End() != logfmt.EndClean {
		t.Fatalf("%s: %v, %v", path, seg.Err(), seg.End())
	}
	return out
}

// PartitionDirs lists the partition directories of a log directory.
func PartitionDirs(t testing.TB, logDir string) []string {
	t.Helper()
	ld, err := layout.ReadLogDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range ld.Partitions {
		dirs = append(dirs, p.Path)
	}
	return dirs
}
