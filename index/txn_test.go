package index

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

func txnBytes(ts ...AbortedTxn) []byte {
	var b []byte
	for _, t := range ts {
		b = AppendAbortedTxn(b, t)
	}
	return b
}

func TestAbortedTxnBytes(t *testing.T) {
	got := AppendAbortedTxn([]byte{0xaa}, AbortedTxn{ProducerID: 1, FirstOffset: 2, LastOffset: 0x0102030405060708, LastStableOffset: -1})
	want := []byte{
		0xaa,
		0, 0, // version
		0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 2,
		1, 2, 3, 4, 5, 6, 7, 8,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x\nwant % x", got, want)
	}
}

func TestTxnIndexRoundTrip(t *testing.T) {
	txns := []AbortedTxn{
		{ProducerID: 0, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2},
		{ProducerID: 4000, FirstOffset: 10, LastOffset: 20, LastStableOffset: 15},
		{ProducerID: math.MaxInt64, FirstOffset: 21, LastOffset: math.MaxInt64, LastStableOffset: math.MaxInt64},
	}
	got, probs := ParseTxnIndex(txnBytes(txns...), "f.txnindex")
	if len(probs) != 0 || !reflect.DeepEqual(got, txns) {
		t.Errorf("got %v, %v; want %v", got, probs, txns)
	}
	if got, probs := ParseTxnIndex(nil, ""); got != nil || probs != nil {
		t.Errorf("empty file: %v, %v", got, probs)
	}
}

func TestParseTxnIndex(t *testing.T) {
	a := AbortedTxn{ProducerID: 7, FirstOffset: 100, LastOffset: 110, LastStableOffset: 111}
	b := AbortedTxn{ProducerID: 8, FirstOffset: 105, LastOffset: 120, LastStableOffset: 106}
	version := func(v0, v1 byte, t AbortedTxn) []byte {
		e := AppendAbortedTxn(nil, t)
		e[0], e[1] = v0, v1
		return e
	}
	tests := []struct {
		name  string
		b     []byte
		txns  []AbortedTxn
		probs []Problem
	}{
		{
			name: "partial tail", b: cat(txnBytes(a, b), make([]byte, 33)), txns: []AbortedTxn{a, b},
			probs: []Problem{{Pos: 68, Entry: 2, Msg: "33 bytes at the end do not make a whole entry of 34; Kafka ignores them"}},
		},
		{
			name: "unreadable version stops", b: cat(txnBytes(a), version(1, 0, b), txnBytes(b)), txns: []AbortedTxn{a},
			probs: []Problem{{Pos: 34, Entry: 1, Msg: "version 1, which Kafka cannot read; it reads no entry from here on"}},
		},
		{
			name: "negative version is read", b: cat(txnBytes(a), version(0xff, 0xff, b)), txns: []AbortedTxn{a, b},
			probs: []Problem{{Pos: 34, Entry: 1, Msg: "version field -1 is not 0; Kafka reads only its first byte"}},
		},
		{
			name: "second version byte is ignored", b: version(0, 5, a), txns: []AbortedTxn{a},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "version field 5 is not 0; Kafka reads only its first byte"}},
		},
		{
			name: "markers out of order", b: txnBytes(b, a), txns: []AbortedTxn{b, a},
			probs: []Problem{{Pos: 34, Entry: 1, Msg: "marker offset 110 is not above the previous entry's 120"}},
		},
		{
			name: "bad fields", b: txnBytes(AbortedTxn{ProducerID: -1, FirstOffset: 5, LastOffset: 5, LastStableOffset: 7}),
			txns: []AbortedTxn{{-1, 5, 5, 7}},
			probs: []Problem{
				{Pos: 0, Entry: 0, Msg: "negative producer id -1"},
				{Pos: 0, Entry: 0, Msg: "first offset 5 is not below the marker's offset 5"},
				{Pos: 0, Entry: 0, Msg: "last stable offset 7 is outside [0, marker offset + 1]"},
			},
		},
		{
			name: "negative last stable offset", b: txnBytes(AbortedTxn{1, 5, 6, math.MinInt64}),
			txns:  []AbortedTxn{{1, 5, 6, math.MinInt64}},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "last stable offset -9223372036854775808 is outside [0, marker offset + 1]"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.probs {
				tt.probs[i].File = "f.txnindex"
			}
			txns, probs := ParseTxnIndex(tt.b, "f.txnindex")
			if !reflect.DeepEqual(txns, tt.txns) {
				t.Errorf("got %v, want %v", txns, tt.txns)
			}
			if !reflect.DeepEqual(probs, tt.probs) {
				t.Errorf("problems\n got %+v\nwant %+v", probs, tt.probs)
			}
			r := NewTxnReader(bytes.NewReader(tt.b), int64(len(tt.b)), "f.txnindex")
			var rtxns []AbortedTxn
			var rprobs []Problem
			for r.Next() {
				rtxns = append(rtxns, r.Txn())
				rprobs = append(rprobs, r.Problems()...)
			}
			rprobs = append(rprobs, r.Problems()...)
			if r.Err() != nil || !reflect.DeepEqual(rtxns, txns) || !reflect.DeepEqual(rprobs, probs) {
				t.Errorf("reader disagrees with parser: %v %v %v", rtxns, rprobs, r.Err())
			}
		})
	}
}

func TestTxnReaderErrors(t *testing.T) {
	b := txnBytes(AbortedTxn{1, 2, 3, 4})
	boom := errors.New("boom")
	r := NewTxnReader(errReaderAt{b, boom}, 68, "f")
	for r.Next() {
		t.Error("entry from a failed read")
	}
	if !errors.Is(r.Err(), boom) || len(r.Problems()) != 0 {
		t.Errorf("Err = %v, problems %v", r.Err(), r.Problems())
	}
	r = NewTxnReader(bytes.NewReader(b), 68, "f")
	for r.Next() {
	}
	if ce, ok := logfmt.AsCorrupt(r.Err()); !ok || ce.File != "f" || ce.Pos != 34 {
		t.Errorf("short file: Err = %v", r.Err())
	}
}

func TestSanityCheckTxnIndex(t *testing.T) {
	const base = 100
	a := AbortedTxn{ProducerID: 7, FirstOffset: 50, LastOffset: 100, LastStableOffset: 101}
	below := AbortedTxn{ProducerID: 7, FirstOffset: 50, LastOffset: 99, LastStableOffset: 100}
	v1 := AppendAbortedTxn(nil, a)
	v1[0] = 1
	tests := []struct {
		name string
		b    []byte
		pos  int64 // -1: passes
	}{
		{"empty", nil, -1},
		{"good", txnBytes(a, a), -1}, // order is not Kafka's sanity check's business
		{"partial tail ignored", cat(txnBytes(a), []byte{1, 2, 3}), -1},
		{"marker below base", txnBytes(a, below), 34},
		{"unreadable version", cat(txnBytes(a), v1), 34},
	}
	for _, tt := range tests {
		err := SanityCheckTxnIndex(bytes.NewReader(tt.b), int64(len(tt.b)), base, "f")
		if tt.pos < 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if ce, ok := logfmt.AsCorrupt(err); !ok || ce.Pos != tt.pos || ce.File != "f" {
			t.Errorf("%s: got %v, want a CorruptError in f at %d", tt.name, err, tt.pos)
		}
	}
}
