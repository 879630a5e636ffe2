package upgrade

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// upgradeFixCRCs recomputes the checksum of every entry that frames, so
// that mutated input gets past the checksums into the parsers behind them.
func upgradeFixCRCs(data []byte) {
	for p := 0; len(data)-p >= logfmt.HeaderSizeUpToMagic; {
		size := int(int32(binary.BigEndian.Uint32(data[p+8:])))
		if size < 14 || size > len(data)-p-logfmt.LogOverhead {
			return
		}
		e := data[p : p+logfmt.LogOverhead+size]
		switch {
		case e[16] < 2:
			binary.BigEndian.PutUint32(e[12:], crc32.ChecksumIEEE(e[16:]))
		case e[16] == 2 && len(e) >= logfmt.V2HeaderSize:
			binary.BigEndian.PutUint32(e[17:], crc32.Checksum(e[21:], crc32.MakeTable(crc32.Castagnoli)))
		}
		p += len(e)
	}
}

// upgradeFuzzRules derives conversion rules from one byte.
func upgradeFuzzRules(flags byte) *upgradeRules {
	r := &upgradeRules{toMagic: 1 + int8(flags&1), tsType: logfmt.CreateTime}
	if flags&2 != 0 {
		r.tsType, r.appendTime = logfmt.LogAppendTime, 1_700_000_000_000
	}
	if flags&4 != 0 {
		r.compression, r.recompress = codec.Type(flags>>3&7%5), true
		if !r.compression.ValidFor(r.toMagic) {
			r.compression = codec.Gzip
		}
	}
	return r
}

func upgradeFuzzSeeds(f *testing.F) {
	recs := upgradeRecs(10, 11, 13, 14, 20)
	lz4v0, _ := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 0, Compression: codec.LZ4}, recs)
	snappyV0, _ := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 0, Compression: codec.Snappy}, upgradeRecs(21, 22))
	gzipV1, _ := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 1, Compression: codec.Gzip, TimestampType: logfmt.LogAppendTime, LogAppendTime: 5},
		upgradeRecs(23, 25))
	v2, _ := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(26), upgradeRecs(26, 28))
	var plain []byte
	for i := int64(0); i < 10; i++ {
		plain = logfmt.AppendLegacyMessage(plain, 0, i, 0, -1, []byte("k"), bytes.Repeat([]byte("v"), int(i)))
	}
	all := slices.Concat(plain, lz4v0, snappyV0, gzipV1, v2, logfmt.AppendLegacyMessage(nil, 1, 30, 8, 99, nil, []byte("lat")))
	for flags := range 8 {
		f.Add(all, byte(flags))
	}
	f.Add(plain, byte(0x80|4|1<<3))
	f.Add(all[:len(all)-3], byte(0))
	f.Add(append(slices.Clone(plain), make([]byte, 30)...), byte(1))
}

// FuzzUpgradeSegment converts arbitrary bytes as a segment. It must never
// panic; it either stops with a CorruptError within the input (a field cut
// off by the end of its message is reported where it would start), or writes a
// segment that verification accepts record for record.
func FuzzUpgradeSegment(f *testing.F) {
	upgradeFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, flags byte) {
		if flags&0x80 != 0 {
			data = slices.Clone(data)
			upgradeFixCRCs(data)
		}
		rules := upgradeFuzzRules(flags)
		var base int64
		if len(data) >= 8 {
			base = max(0, int64(binary.BigEndian.Uint64(data)))
		}
		var out bytes.Buffer
		c := newUpgradeConverter(rules, bytes.NewReader(data), int64(len(data)), "orig", base)
		c.open = func() (io.Writer, error) { return &out, nil }
		if err := c.run(); err != nil {
			ce, ok := logfmt.AsCorrupt(err)
			if !ok || ce.File != "orig" || ce.Pos < 0 || ce.Pos > int64(len(data)) {
				t.Fatalf("conversion error %v is not a CorruptError inside the input", err)
			}
			return
		}
		if !c.rewritten() {
			return
		}
		if int64(out.Len()) != c.bytesOut {
			t.Fatalf("wrote %d bytes, counted %d", out.Len(), c.bytesOut)
		}
		_, err := verifyUpgrade(rules, bytes.NewReader(data), int64(len(data)), "orig", bytes.NewReader(out.Bytes()), int64(out.Len()), "new", base)
		if errors.Is(err, ErrVerify) {
			t.Fatalf("conversion output does not verify: %v", err)
		}
		if err != nil {
			if ce, ok := logfmt.AsCorrupt(err); !ok || ce.File != "orig" {
				t.Fatalf("verification error %v", err)
			}
		}
	})
}
