package logfmt

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The vectors of kafka-formats.md §2.5, computed from Kafka's rules.
func TestByteVectors(t *testing.T) {
	v0 := unhex(t, "0000000000000000 00000013 87a77ab2 00 00 ffffffff 00000005 68656c6c6f")
	if got := AppendLegacyMessage(nil, 0, 0, 0, -1, nil, []byte("hello")); !bytes.Equal(got, v0) {
		t.Errorf("v0 message:\n got %x\nwant %x", got, v0)
	}
	v1 := unhex(t, "0000000000000000 00000018 e4e321bc 01 00 00000000000003e8 00000001 6b 00000001 76")
	if got := AppendLegacyMessage(nil, 1, 0, 0, 1000, []byte("k"), []byte("v")); !bytes.Equal(got, v1) {
		t.Errorf("v1 message:\n got %x\nwant %x", got, v1)
	}
	v2 := unhex(t, `0000000000000000 00000039 ffffffff 02 ae59b08f 0000 00000000 00000000000003e8 00000000000003e8
	  ffffffffffffffff ffff ffffffff 00000001 | 0e 00 00 00 01 02 76 00`)
	got, err := AppendBatch(nil, DefaultBatchOptions(0), []Record{{Offset: 0, Timestamp: 1000, Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, v2) {
		t.Errorf("v2 batch:\n got %x\nwant %x", got, v2)
	}
	for name, b := range map[string][]byte{"v0": v0, "v1": v1, "v2": v2} {
		batch := Batch{Data: b}
		if err := batch.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		v   int32
		enc string
	}{{0, "00"}, {-1, "01"}, {1, "02"}, {63, "7e"}, {-64, "7f"}, {64, "8001"}, {300, "d804"},
		{1<<31 - 1, "feffffff0f"}, {-1 << 31, "ffffffff0f"}} {
		enc := appendVarint(nil, c.v)
		if hex.EncodeToString(enc) != c.enc {
			t.Errorf("appendVarint(%d) = %x, want %s", c.v, enc, c.enc)
		}
		if varintLen(c.v) != len(enc) {
			t.Errorf("varintLen(%d) = %d, want %d", c.v, varintLen(c.v), len(enc))
		}
		v, n, err := readVarint(enc)
		if err != nil || v != c.v || n != len(enc) {
			t.Errorf("readVarint(%s) = %d, %d, %v", c.enc, v, n, err)
		}
	}
	if _, _, err := readVarint(unhex(t, "ffffffffff01")); err != errVarintTooLong {
		t.Errorf("6-byte varint: got %v, want too long", err)
	}
	if _, _, err := readVarlong(unhex(t, "ffffffffffffffffffff01")); err != errVarlongTooLong {
		t.Errorf("11-byte varlong: got %v, want too long", err)
	}
	if _, _, err := readVarint(unhex(t, "80")); err != errVarintShort {
		t.Errorf("cut varint: got %v", err)
	}
	for _, v := range []int64{0, -1, 1 << 40, -1 << 63, 1<<63 - 1} {
		enc := appendVarlong(nil, v)
		got, n, err := readVarlong(enc)
		if err != nil || got != v || n != len(enc) || varlongLen(v) != len(enc) {
			t.Errorf("varlong %d: %d %d %v", v, got, n, err)
		}
	}
}

// TestVarintAt checks the hot path's varintAt and skipVarlong against
// readVarint and readVarlong on every prefix of values of each length,
// runs of continuation bytes, and random bytes, at offsets into a buffer.
func TestVarintAt(t *testing.T) {
	var inputs [][]byte
	for _, v := range []int64{0, -1, 63, -64, 64, 8191, -8192, 8192, 1 << 20, 1<<31 - 1, -1 << 31, 1 << 40, 1<<63 - 1, -1 << 63} {
		inputs = append(inputs, appendVarint(nil, int32(v)), appendVarlong(nil, v))
	}
	for n := 1; n <= 12; n++ {
		inputs = append(inputs, append(bytes.Repeat([]byte{0xff}, n), 0x01))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256)) | byte(rng.IntN(2))<<7
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		for cut := 0; cut <= len(in); cut++ {
			b := append([]byte{0x80, 0x80}, in[:cut]...)
			v, n, err := readVarint(b[2:])
			gv, end, ok := varintAt(b, 2)
			if ok != (err == nil) || ok && (gv != v || end != 2+n) {
				t.Errorf("varintAt(%x) = %d, %d, %v; readVarint: %d, %d, %v", b[2:], gv, end-2, ok, v, n, err)
			}
			_, n, err = readVarlong(b[2:])
			end, ok = skipVarlong(b, 2)
			if ok != (err == nil) || ok && end != 2+n {
				t.Errorf("skipVarlong(%x) = %d, %v; readVarlong: %d, %v", b[2:], end-2, ok, n, err)
			}
		}
	}
}

func TestIncrementSequence(t *testing.T) {
	for _, c := range []struct{ seq, d, want int32 }{
		{0, 5, 5}, {-1, 5, -1}, {1<<31 - 1, 1, 0}, {1<<31 - 3, 5, 2},
	} {
		if got := IncrementSequence(c.seq, c.d); got != c.want {
			t.Errorf("IncrementSequence(%d, %d) = %d, want %d", c.seq, c.d, got, c.want)
		}
	}
}
