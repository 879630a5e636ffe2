package reindex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/txnbatch"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// FuzzCheck runs Check and DryRun over arbitrary segment and index bytes:
// whatever the input, they end, never panic, and grade what they find.
func FuzzCheck(f *testing.F) {
	// Seeds are built in memory: gen would fsync in every fuzzing process.
	var log []byte
	for _, b := range []txnbatch.Spec{txnbatch.Data(1, 0, 3, true), txnbatch.Data(-1, 3, 40, false), txnbatch.Marker(1, 43, logfmt.ControlAbort), txnbatch.Data(2, 44, 2, true),
		txnbatch.Data(-1, 46, 60, false), txnbatch.Marker(2, 106, logfmt.ControlCommit), txnbatch.Data(-1, 107, 5, false)} {
		log = append(log, b.Bytes(f)...)
	}
	rec := index.NewRecovery(0, 500)
	seg := logfmt.NewSegmentReader(bytes.NewReader(log), int64(len(log)), "")
	for seg.Next() {
		rec.Add(seg.Batch().LastOffset(), seg.Batch().MaxTimestamp(), seg.Batch().Size())
	}
	rec.Finish()
	idx, _ := rec.OffsetIndexBytes()
	tidx, _ := rec.TimeIndexBytes()
	txn := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 43, LastStableOffset: 44})
	f.Add(log, idx, tidx, txn)
	f.Add(log[:len(log)/2], idx, tidx, txn)
	f.Add(log, append(idx, 0, 0, 0, 0, 0, 0, 0, 0), append(tidx, 1), txn[:10])
	f.Add([]byte{}, []byte{}, []byte{}, []byte{})
	stem := layout.SegmentName(0, "")
	f.Fuzz(func(t *testing.T, log, idx, tidx, txn []byte) {
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for ext, b := range map[string][]byte{layout.LogExt: log, layout.IndexExt: idx, layout.TimeIndexExt: tidx, layout.TxnIndexExt: txn} {
			if err := os.WriteFile(filepath.Join(dir, stem+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []Mode{Check, DryRun} {
			rep, err := Partition(dir, Options{Mode: m, Offset: true, Time: true, Txn: true, IntervalBytes: 500})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Severity < Note || f.Severity > Problem || f.File == "" || f.Msg == "" {
					t.Fatalf("bad finding %+v", f)
				}
			}
		}
	})
}
