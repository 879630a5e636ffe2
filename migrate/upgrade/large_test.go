package upgrade

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// upgradeFile is a destination in memory that can be written at an offset,
// as the new segment file can, and remembers its largest write.
type upgradeFile struct {
	data    []byte
	largest int
}

func (f *upgradeFile) Write(p []byte) (int, error) {
	f.data, f.largest = append(f.data, p...), max(f.largest, len(p))
	return len(p), nil
}

func (f *upgradeFile) WriteAt(p []byte, off int64) (int, error) {
	return copy(f.data[off:], p), nil
}

// TestUpgradeLargeWrapperInPieces: a large legacy wrapper's batch goes to
// the file as it is compressed, its header written over zeros last, so the
// converter never holds it whole (before, it was built in memory and
// written at once); the file is byte for byte the batch built whole.
func TestUpgradeLargeWrapperInPieces(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []codec.Type{codec.Gzip, codec.Snappy, codec.LZ4} {
		t.Run(c.String(), func(t *testing.T) {
			recs := upgradeRecs(10, 11, 12, 13, 14, 15, 16, 17)
			for i := range recs {
				recs[i].Value = make([]byte, 512<<10)
				for j := range recs[i].Value {
					recs[i].Value[j] = byte(rng.Uint32())
				}
			}
			data := append(logfmt.AppendLegacyMessage(nil, 0, 9, 0, -1, nil, []byte("before")), upgradeWrapper(t, c, recs)...)
			rules := &upgradeRules{toMagic: 2}
			convert := func(w io.Writer) {
				conv := newUpgradeConverter(rules, bytes.NewReader(data), int64(len(data)), "orig", 0)
				conv.open = func() (io.Writer, error) { return w, nil }
				if err := conv.run(); err != nil {
					t.Fatal(err)
				}
			}
			var whole bytes.Buffer // no WriteAt: the batch is built in memory
			convert(&whole)
			var f upgradeFile
			convert(&f)
			if !bytes.Equal(f.data, whole.Bytes()) {
				t.Fatalf("written in pieces: %d bytes differing from the %d built whole", len(f.data), whole.Len())
			}
			if f.largest > 1<<20 {
				t.Errorf("a write of %d bytes, for a batch of %d", f.largest, len(f.data))
			}
			if _, err := verifyUpgrade(rules, bytes.NewReader(data), int64(len(data)), "orig", bytes.NewReader(f.data), int64(len(f.data)), "new", 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUpgradeVerifyLargeBatchOneSide: a new batch over upgradeOneSideBytes
// is compared with its original one side at a time, by digest; a writer
// that changes a value, a key (null to empty too), an offset or a
// timestamp in it is still caught.
func TestUpgradeVerifyLargeBatchOneSide(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := upgradeRecs(10, 11, 12, 13, 14, 15, 16, 17)
	for i := range recs {
		recs[i].Timestamp = 1000 + int64(i)
		recs[i].Value = make([]byte, 512<<10)
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(rng.Uint32())
		}
	}
	data, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 1, Compression: codec.Snappy}, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		tamper func(*logfmt.Record)
	}{
		{"none", nil},
		{"value", func(r *logfmt.Record) { r.Value[len(r.Value)/2] ^= 1 }},
		{"null-key", func(r *logfmt.Record) { r.Key = []byte{} }}, // record 11's key is null
		{"offset", func(r *logfmt.Record) { r.Offset += 100 }},
		{"timestamp", func(r *logfmt.Record) { r.Timestamp++ }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upgradeTamper = func(r *logfmt.Record) {
				if tc.tamper != nil && r.Offset == 11 {
					r.Value = slices.Clone(r.Value)
					tc.tamper(r)
				}
			}
			defer func() { upgradeTamper = nil }()
			rules := &upgradeRules{toMagic: 2}
			conv := newUpgradeConverter(rules, bytes.NewReader(data), int64(len(data)), "orig", 0)
			var f upgradeFile
			conv.open = func() (io.Writer, error) { return &f, nil }
			if err := conv.run(); err != nil {
				t.Fatal(err)
			}
			if len(f.data) <= upgradeOneSideBytes {
				t.Fatalf("new batch of %d bytes, not over %d", len(f.data), upgradeOneSideBytes)
			}
			_, err := verifyUpgrade(rules, bytes.NewReader(data), int64(len(data)), "orig", bytes.NewReader(f.data), int64(len(f.data)), "new", 0)
			if tc.tamper == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, ErrVerify) {
				t.Fatalf("got %v, want a verification failure", err)
			}
		})
	}
}

// TestUpgradeLargeEntryThenManyWrites: the verifier waits for the
// converter to be done before it reads a large entry, so the converter must
// never wait for it; here it writes about 150 times after a 3 MiB wrapper,
// 64 KiB messages to magic 1 (with the writer waiting once 64 boundaries
// were queued, the two waited for each other).
func TestUpgradeLargeEntryThenManyWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := upgradeRecs(0, 1, 2, 3, 4, 5)
	for i := range recs {
		recs[i].Value = make([]byte, 512<<10)
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(rng.Uint32())
		}
	}
	data := upgradeWrapper(t, codec.Snappy, recs)
	value := make([]byte, 64<<10)
	for o := int64(6); o < 606; o++ {
		data = logfmt.AppendLegacyMessage(data, 0, o, 0, -1, nil, value)
	}
	dir, _ := upgradeWritePartition(t, 0, data)
	done := make(chan error, 1)
	go func() {
		_, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: 1})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("upgrade did not finish: the converter and its verifier wait for each other")
	}
}
