package faulttest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// The decompression bombs are valid entries whose records hold megabytes
// of zeros: n records (v2) or inner messages (magic 0 and 1) with values of
// mib MiB each. They are built from compressed pieces, since gzip members,
// zstd frames, xerial snappy chunks and Kafka lz4 blocks may each follow
// one another: a record's few bytes of framing are compressed on their own,
// and one compressed MiB of zeros is repeated for its value.

// pieces joins the compression of each piece under codec c into one
// payload.
type pieces struct {
	t     testing.TB
	c     codec.Type
	magic int8
	out   []byte
	zeros []byte // one MiB of zeros, compressed as a middle piece
}

const (
	xerialHeader = 16 // magic, version, compatible version
	lz4Header    = 7  // magic, FLG, BD, HC
	lz4EndMark   = 4  // a zero block size
	mib          = 1 << 20
	bombTime     = 1700000000000
)

func newPieces(t testing.TB, c codec.Type, magic int8) *pieces {
	p := &pieces{t: t, c: c, magic: magic}
	whole := p.compress(nil)
	switch c {
	case codec.Snappy:
		p.out = whole[:xerialHeader:xerialHeader]
	case codec.LZ4:
		p.out = whole[:lz4Header:lz4Header]
	}
	p.zeros = p.middle(p.compress(make([]byte, mib)))
	return p
}

func (p *pieces) compress(b []byte) []byte {
	p.t.Helper()
	out, err := codectest.Compress(nil, p.c, b, p.magic)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// middle strips the stream header and end that a piece between others
// must not repeat.
func (p *pieces) middle(whole []byte) []byte {
	switch p.c {
	case codec.Snappy:
		return whole[xerialHeader:]
	case codec.LZ4:
		return whole[lz4Header : len(whole)-lz4EndMark]
	}
	return whole
}

func (p *pieces) add(b []byte) {
	if len(b) > 0 {
		p.out = append(p.out, p.middle(p.compress(b))...)
	}
}

func (p *pieces) addZeros(n int) {
	for range n {
		p.out = append(p.out, p.zeros...)
	}
}

func (p *pieces) payload() []byte {
	if p.c == codec.LZ4 {
		return binary.LittleEndian.AppendUint32(p.out, 0)
	}
	return p.out
}

// bombEntry is a v2 batch of n records, or a legacy wrapper of n inner
// messages, each valued mib MiB of zeros, with valid checksums.
func bombEntry(t testing.TB, c codec.Type, magic int8, n, mibs int) []byte {
	return keyedBombEntry(t, c, magic, n, mibs, false)
}

// keyedBombEntry is bombEntry whose records have keys, each its own
// ("key-000042"), when keyed is true: compact then keeps every record.
func keyedBombEntry(t testing.TB, c codec.Type, magic int8, n, mibs int, keyed bool) []byte {
	p := newPieces(t, c, magic)
	key := func(i int) []byte {
		if !keyed {
			return nil
		}
		return fmt.Appendf(nil, "key-%06d", i)
	}
	if magic < 2 {
		zeros := make([]byte, mibs*mib)
		for i := range n {
			inner := logfmt.AppendLegacyMessage(nil, magic, int64(i), 0, bombTime, key(i), nil)
			inner = inner[:len(inner)-4]
			inner = binary.BigEndian.AppendUint32(inner, uint32(mibs*mib))
			binary.BigEndian.PutUint32(inner[8:], uint32(len(inner)-logfmt.LogOverhead+mibs*mib))
			crc := crc32.ChecksumIEEE(inner[logfmt.MagicOffset:])
			crc = crc32.Update(crc, crc32.IEEETable, zeros)
			binary.BigEndian.PutUint32(inner[12:], crc)
			p.add(inner)
			p.addZeros(mibs)
		}
		return logfmt.AppendLegacyMessage(nil, magic, int64(n-1), int8(c), bombTime, nil, p.payload())
	}
	for i := range n {
		// DefaultRecord: length, attributes, timestamp delta, offset
		// delta, the key (or null), the value's length, the value, no
		// headers.
		var body []byte
		body = append(body, 0, 0)
		body = binary.AppendVarint(body, int64(i))
		if k := key(i); k != nil {
			body = binary.AppendVarint(body, int64(len(k)))
			body = append(body, k...)
		} else {
			body = binary.AppendVarint(body, -1)
		}
		body = binary.AppendVarint(body, int64(mibs*mib))
		rec := binary.AppendVarint(nil, int64(len(body)+mibs*mib+1))
		p.add(append(rec, body...))
		p.addZeros(mibs)
		p.add([]byte{0})
	}
	o := logfmt.DefaultBatchOptions(0)
	o.LastOffsetDelta = int32(n - 1)
	b, err := logfmt.AppendBatch(nil, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, p.payload()...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-logfmt.LogOverhead))
	b[22] = byte(c)
	binary.BigEndian.PutUint64(b[27:], bombTime)
	binary.BigEndian.PutUint64(b[35:], bombTime)
	binary.BigEndian.PutUint32(b[57:], uint32(n))
	fixCRC(b)
	return b
}

// TestBombEntries: the bombs are what they claim to be, records a reader
// takes one by one.
func TestBombEntries(t *testing.T) {
	for _, f := range allFormats() {
		if f.codec == codec.None {
			continue
		}
		for _, keyed := range []bool{false, true} {
			b := keyedBombEntry(t, f.codec, f.magic, 3, 2, keyed)
			batch := logfmt.Batch{Data: b}
			if err := batch.Validate(); err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			var it logfmt.RecordIter
			if err := it.Reset(&batch); err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			n := 0
			for ; it.Next(); n++ {
				r := it.Record()
				key := []byte(nil)
				if keyed {
					key = fmt.Appendf(nil, "key-%06d", n)
				}
				if r.Offset != int64(n) || !bytes.Equal(r.Key, key) || (r.Key == nil) != (key == nil) ||
					len(r.Value) != 2*mib || !bytes.Equal(r.Value, make([]byte, 2*mib)) {
					t.Fatalf("%s keyed %v: record %d: offset %d, key %q, %d bytes", f.name, keyed, n, r.Offset, r.Key, len(r.Value))
				}
			}
			if it.Err() != nil || n != 3 {
				t.Fatalf("%s keyed %v: %d records, %v", f.name, keyed, n, it.Err())
			}
		}
	}
}

// TestWriteBombs writes, when LOGTOOL_BOMB_DIR is set, a log directory for
// each compressed format (LOGTOOL_BOMB_DIR/<format>/kafka-logs) holding one
// bomb of LOGTOOL_BOMB_RECORDS records (512 by default) of 1 MiB each, for
// scripts/bench.sh to measure the commands' memory on.
func TestWriteBombs(t *testing.T) {
	out := os.Getenv("LOGTOOL_BOMB_DIR")
	if out == "" {
		t.Skip("LOGTOOL_BOMB_DIR is not set")
	}
	n := 512
	if s := os.Getenv("LOGTOOL_BOMB_RECORDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("LOGTOOL_BOMB_RECORDS=%q", s)
		}
	}
	for _, f := range allFormats() {
		if f.codec == codec.None {
			continue
		}
		part := filepath.Join(out, f.name, "kafka-logs", "bomb-0")
		if err := os.MkdirAll(part, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(part, "00000000000000000000.log"), bombEntry(t, f.codec, f.magic, n, 1))
	}
}
