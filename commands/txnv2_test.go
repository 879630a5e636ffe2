package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// txnV2Partition writes a partition as a Kafka 4 broker writes it under
// transaction version 2 (KIP-890): the coordinator bumps the producer epoch
// with every transaction marker, and the producer's next transaction runs
// at the bumped epoch with its sequence restarted at 0.
//
//	0-1  transaction at epoch 5 ("c1", "c2")   committed
//	2    a non-transactional record ("plain")
//	3    COMMIT marker, epoch 6
//	4-5  transaction at epoch 6 ("a1", "a2")   aborted
//	6    ABORT marker, epoch 7
//	7    transaction at epoch 7 ("c3")         committed
//	8    COMMIT marker, epoch 8
//
// The log rolls at offset 6, in the aborted transaction, and the broker's
// producer snapshot at the roll holds it open (first offset 4).
func txnV2Partition(t *testing.T) string {
	t.Helper()
	const pid = 42
	ts := func(off int64) int64 { return 1_700_000_000_000 + off }
	data := func(base int64, epoch int16, txn bool, values ...string) []byte {
		o := logfmt.DefaultBatchOptions(base)
		if txn {
			o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = pid, epoch, 0, true
		}
		var recs []logfmt.Record
		for i, v := range values {
			recs = append(recs, logfmt.Record{Offset: base + int64(i), Timestamp: ts(base + int64(i)), Value: []byte(v)})
		}
		b, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	marker := func(off int64, epoch int16, ct logfmt.ControlType) []byte {
		o := logfmt.DefaultBatchOptions(off)
		o.ProducerID, o.ProducerEpoch, o.Transactional, o.Control = pid, epoch, true, true
		b, err := logfmt.AppendBatch(nil, o, []logfmt.Record{{Offset: off, Timestamp: ts(off),
			Key: logfmt.ControlKey(ct), Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{CoordinatorEpoch: 3})}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, parts ...[]byte) {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Join(parts, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("00000000000000000000.log", data(0, 5, true, "c1", "c2"), data(2, -1, false, "plain"),
		marker(3, 6, logfmt.ControlCommit), data(4, 6, true, "a1", "a2"))
	write("00000000000000000006.log", marker(6, 7, logfmt.ControlAbort), data(7, 7, true, "c3"), marker(8, 8, logfmt.ControlCommit))
	write("00000000000000000006.snapshot", snapshot.Append(nil, []snapshot.Entry{{ProducerID: pid, Epoch: 6, LastSequence: 1,
		LastOffset: 5, OffsetDelta: 1, Timestamp: ts(5), CoordinatorEpoch: 3, CurrentTxnFirstOffset: 4}}))
	return dir
}

// TestTransactionsV2 checks dump, export and reindex on a partition whose
// markers bump the producer epoch (Kafka 4, KIP-890 transaction version 2).
func TestTransactionsV2(t *testing.T) {
	dir := txnV2Partition(t)

	// dump: every batch and marker read, each with its own epoch.
	code, out, errOut := reindexCLI(t, "dump", "--deep-iteration", filepath.Join(dir, "00000000000000000000.log"),
		filepath.Join(dir, "00000000000000000006.log"))
	if code != 0 || errOut != "" {
		t.Fatalf("dump: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"baseOffset: 3 lastOffset: 3 count: 1 baseSequence: -1 lastSequence: -1 producerId: 42 producerEpoch: 6",
		"baseOffset: 6 lastOffset: 6 count: 1 baseSequence: -1 lastSequence: -1 producerId: 42 producerEpoch: 7",
		"baseOffset: 8 lastOffset: 8 count: 1 baseSequence: -1 lastSequence: -1 producerId: 42 producerEpoch: 8",
		"| offset: 6 CreateTime: 1700000000006 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks %q:\n%s", want, out)
		}
	}

	// export: what a read_committed consumer sees, the aborted
	// transaction of epoch 6 left out although the next marker has
	// another epoch.
	code, out, errOut = reindexCLI(t, "export", dir)
	if code != 0 || !strings.Contains(errOut, "exported 4 record(s)") {
		t.Fatalf("export: exit %d, stderr %q", code, errOut)
	}
	var offsets []int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ Offset int64 }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		offsets = append(offsets, r.Offset)
	}
	if want := []int64{0, 1, 2, 7}; !slices.Equal(offsets, want) {
		t.Errorf("export offsets %v, want %v", offsets, want)
	}

	// reindex: the aborted transaction in the second segment's .txnindex,
	// its first offset from the snapshot, its LSO the marker's next offset
	// (no other transaction open); none in the first segment's.
	if code, _, errOut = reindexCLI(t, "reindex", dir); code != 0 {
		t.Fatalf("reindex: exit %d, stderr %q", code, errOut)
	}
	for base, want := range map[string][]index.AbortedTxn{
		"00000000000000000000": nil,
		"00000000000000000006": {{ProducerID: 42, FirstOffset: 4, LastOffset: 6, LastStableOffset: 7}},
	} {
		b, err := os.ReadFile(filepath.Join(dir, base+".txnindex"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if txns, problems := indextest.ParseTxnIndex(b, base); len(problems) > 0 || !slices.Equal(txns, want) {
			t.Errorf("%s.txnindex %+v %v, want %+v", base, txns, problems, want)
		}
	}
	if code, out, _ = reindexCLI(t, "reindex", "--check", dir); code != 0 {
		t.Errorf("reindex --check: exit %d\n%s", code, out)
	}

	// The producer state reindex replays, from the snapshot through the
	// second segment: at the log end the producer has the last marker's
	// epoch, which forgot its last batch, as Kafka's snapshot would say.
	p := logseg.NewProducerState()
	p.Load([]snapshot.Entry{{ProducerID: 42, Epoch: 6, LastSequence: 1, LastOffset: 5, OffsetDelta: 1,
		Timestamp: 1_700_000_000_005, CoordinatorEpoch: 3, CurrentTxnFirstOffset: 4}})
	seg, err := logfmt.OpenSegment(filepath.Join(dir, "00000000000000000006.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	it := &logfmt.RecordIter{}
	var aborted []index.AbortedTxn
	for seg.Next() {
		a, ok, err := p.Apply(seg.Batch(), it)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			aborted = append(aborted, a)
		}
	}
	if err := seg.Err(); err != nil {
		t.Fatal(err)
	}
	want := []snapshot.Entry{{ProducerID: 42, Epoch: 8, LastSequence: -1, LastOffset: -1, OffsetDelta: 0,
		Timestamp: 1_700_000_000_008, CoordinatorEpoch: 3, CurrentTxnFirstOffset: -1}}
	if got := p.Snapshot(); !slices.Equal(got, want) || p.Open() != 0 || len(aborted) != 1 {
		t.Errorf("producer state %+v, %d open, aborted %+v; want %+v", got, p.Open(), aborted, want)
	}
}
