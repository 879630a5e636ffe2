package checkpoint

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/logtool/logtool/logfmt"
)

// checkFuzzError fails unless err is a CorruptError naming file, with a
// position inside the input (or -1 where allowUnknown).
func checkFuzzError(t *testing.T, err error, n int, allowUnknown bool) {
	t.Helper()
	ce, ok := logfmt.AsCorrupt(err)
	if !ok {
		t.Fatalf("error %v is not a CorruptError", err)
	}
	if ce.File != "fuzz" {
		t.Fatalf("error %v names file %q", err, ce.File)
	}
	if ce.Pos > int64(n) || ce.Pos < 0 && !(allowUnknown && ce.Pos == -1) {
		t.Fatalf("error %v has position %d outside the %d-byte input", err, ce.Pos, n)
	}
}

// FuzzReadOffsets drives OffsetReader, the reader under ReadOffsets and
// ScanOffsets, and writes what it accepts back through OffsetWriter.
func FuzzReadOffsets(f *testing.F) {
	for _, s := range []string{
		"", "0", "0\n0\n", "0\n2\nfoo 0 12\nbar 7 -1\n", "0\r\n1\r\nfoo 1 2", "0\n1\n 3 4\n",
		"0\n2147483647\nfoo 0 1\n", "0\n1\nfoo 0 1 2\n", "1\n0\n", "0\n1\nf\xffo 0 1\n",
		"0\n3\na 0 1\nb 0 2\na 1 3\n", "0\n1\nfoo 0 1\nfoo x 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []OffsetEntry
		r := NewOffsetReader(bytes.NewReader(data), "fuzz")
		for r.Next() {
			e := r.Entry()
			if e.Line != len(got)+3 {
				t.Fatalf("entry %+v after %d entries: want line %d", e, len(got), len(got)+3)
			}
			got = append(got, e)
		}
		if err := r.Err(); err != nil {
			checkFuzzError(t, err, len(data), false)
			if r.Next() || r.Err() != err {
				t.Fatalf("the reader went on after %v", err)
			}
			return
		}
		var b bytes.Buffer
		w := NewOffsetWriter(&b, "fuzz", len(got))
		for _, e := range got {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := AppendOffsets(nil, got); !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("OffsetWriter wrote %q, AppendOffsets %q", b.Bytes(), want)
		}
		again, err := ReadOffsets(&b, "fuzz")
		if err != nil {
			t.Fatalf("rereading %+v: %v", got, err)
		}
		if len(got) != len(again) || len(got) > 0 && !reflect.DeepEqual(got, again) {
			t.Fatalf("round trip gave %+v, want %+v", again, got)
		}
	})
}

func FuzzReadLeaderEpochs(f *testing.F) {
	for _, s := range []string{
		"", "0\n1\n0 0\n", "0\n3\n0 0\n2 2\n20 16\n", "0\n1\n 7\n", "0\n1\n2147483648 0\n", "0\n2\n1 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadLeaderEpochs(bytes.NewReader(data), "fuzz")
		if err != nil {
			checkFuzzError(t, err, len(data), false)
			return
		}
		again, err := ReadLeaderEpochs(bytes.NewReader(AppendLeaderEpochs(nil, got)), "fuzz")
		if err != nil || len(got) != len(again) || len(got) > 0 && !reflect.DeepEqual(got, again) {
			t.Fatalf("round trip of %+v gave %+v, %v", got, again, err)
		}
	})
}

func FuzzReadCleaner(f *testing.F) {
	for _, s := range []string{"1\n1234 1700000000000\n", "1\n0 -1\n", "1\n5  -1\n", "0\n5 -1\n", "1\n5 -1\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCleaner(bytes.NewReader(data), "fuzz")
		if err != nil {
			checkFuzzError(t, err, len(data), false)
			return
		}
		// The format is canonical: whatever is accepted is what AppendCleaner writes.
		if b := AppendCleaner(nil, c); !bytes.Equal(b, data) {
			t.Fatalf("accepted %q, which AppendCleaner writes as %q", data, b)
		}
	})
}

func FuzzPartitionMetadata(f *testing.F) {
	for _, s := range []string{
		"version: 0\ntopic_id: " + testID, "version:\t 0\r\ntopic_id:  " + testID + "==\n",
		"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "version:0\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadPartitionMetadata(data, "fuzz")
		if err != nil {
			checkFuzzError(t, err, len(data), false)
			return
		}
		again, err := ReadPartitionMetadata(AppendPartitionMetadata(nil, m), "fuzz")
		if err != nil || again != m {
			t.Fatalf("round trip of %+v gave %+v, %v", m, again, err)
		}
	})
}

func FuzzMetaProperties(f *testing.F) {
	for _, s := range []string{
		"#\n#Mon Mar 02 09:15:00 CET 2020\nversion=0\nbroker.id=0\n",
		"node.id=4\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA\nversion=1\ncluster.id=some-cluster\n",
		"k=a\\\r\n  b\\\n\tc\r\n# c\\\n!x\n\\u0041\\ b = \\uD83D\\uDE00\\",
		"version=2\nnode.id=2\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA==",
		"version=1\nnode.id=x", "k=\\u12",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadMetaProperties(data, "fuzz")
		if err != nil {
			checkFuzzError(t, err, len(data), true)
			return
		}
		written := AppendMetaProperties(nil, m, time.Unix(1e9, 0).UTC())
		again, err := ReadMetaProperties(written, "fuzz")
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip of %+v through %q gave %+v, %v", m, written, again, err)
		}
	})
}

func FuzzQuorumState(f *testing.F) {
	for _, s := range []string{
		`{"clusterId":"","leaderId":2,"leaderEpoch":7,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
		`{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"AQIDBAUGBwgJCgsMDQ4PEA","data_version":1}`,
		"{\"data_version\":0,\"x\":null}\n{", "null", `{"leaderId":1,`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ReadQuorumState(data, "fuzz"); err != nil {
			checkFuzzError(t, err, len(data), true)
		}
	})
}

func FuzzCleanShutdown(f *testing.F) {
	for _, s := range []string{"", `{"version":0,"brokerEpoch":53326}`, `{"brokerEpoch":"1"}`, "{", " x", `{"brokerEpoch":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ReadCleanShutdown(data, "fuzz"); err != nil {
			checkFuzzError(t, err, len(data), true)
		}
	})
}
