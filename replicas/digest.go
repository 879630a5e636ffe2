package replicas

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// A digest is what a broker's machine sends instead of its log: per
// partition its identity, checkpoints, epochs and batch headers, and the
// record hashes of compacted replicas, in PartitionKey order.
//
// The file is the magic line digestMagic, a version byte, then a zstd stream
// of frames: uvarint length, body, CRC-32C of the body (big-endian). The
// first frame describes the broker, one frame holds each partition, and the
// last holds the number of partitions, so a digest cut short is told from a
// whole one. A reader holds one frame at a time.

const (
	digestMagic   = "logtool-digest\n"
	DigestVersion = 1

	frameBroker    = 'B'
	framePartition = 'P'
	frameEnd       = 'E'
)

// maxFrame bounds one frame: a partition of tens of millions of batches. A
// damaged length cannot make a reader hold more.
var maxFrame uint64 = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteDigest writes the digest of the sources' brokers, which must be one
// broker's (its log.dirs), to path through a safefile: nothing is visible
// under path until it is whole.
func WriteDigest(path string, src Source, progress func(p *Partition)) (partitions int, err error) {
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 256<<10)
	if _, err := bw.WriteString(digestMagic); err != nil {
		return 0, err
	}
	if err := bw.WriteByte(DigestVersion); err != nil {
		return 0, err
	}
	// A small window keeps both ends' memory constant.
	zw, err := zstd.NewWriter(bw, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return 0, err
	}
	var e enc
	put := func() error {
		var hdr [binary.MaxVarintLen64]byte
		n := binary.PutUvarint(hdr[:], uint64(len(e.b)))
		e.b = binary.BigEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))
		if _, err := zw.Write(hdr[:n]); err != nil {
			return err
		}
		_, err := zw.Write(e.b)
		return err
	}
	e.broker(src.Broker())
	if err := put(); err != nil {
		return 0, err
	}
	for {
		p, err := src.Next()
		if err != nil {
			return partitions, err
		}
		if p == nil {
			break
		}
		e.partition(p)
		if err := put(); err != nil {
			return partitions, err
		}
		partitions++
		if progress != nil {
			progress(p)
		}
	}
	e.b = append(e.b[:0], frameEnd)
	e.uvarint(uint64(partitions))
	if err := put(); err != nil {
		return partitions, err
	}
	if err := zw.Close(); err != nil {
		return partitions, err
	}
	if err := bw.Flush(); err != nil {
		return partitions, err
	}
	return partitions, f.Commit()
}

type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *enc) broker(b Broker) {
	e.b = append(e.b[:0], frameBroker)
	e.str(b.Name)
	e.varint(int64(b.NodeID))
	e.str(b.ClusterID)
	e.uvarint(uint64(len(b.Dirs)))
	for _, d := range b.Dirs {
		e.str(d)
	}
	e.uvarint(uint64(len(b.DirectoryIDs)))
	for _, d := range b.DirectoryIDs {
		e.str(d)
	}
}

func (e *enc) partition(p *Partition) {
	e.b = append(e.b[:0], framePartition)
	e.str(p.Source)
	e.str(p.Topic)
	e.varint(int64(p.Partition))
	e.bool(p.HasTopicID)
	e.b = append(e.b, p.TopicID[:]...)
	e.varint(p.LogStartOffset)
	e.varint(p.LogEndOffset)
	e.varint(p.HighWatermark)
	e.bool(p.HighWatermarkKnown)
	e.bool(p.Hashed)
	e.uvarint(uint64(len(p.Epochs)))
	for _, ep := range p.Epochs {
		e.varint(int64(ep.Epoch))
		e.varint(ep.StartOffset)
	}
	e.uvarint(uint64(len(p.Damage)))
	for _, d := range p.Damage {
		e.str(d.File)
		e.varint(d.Pos)
		e.str(d.Msg)
		e.varint(d.From)
		e.varint(d.To)
	}
	e.uvarint(uint64(len(p.Batches)))
	prev := int64(0)
	for i := range p.Batches {
		b := &p.Batches[i]
		// Offsets as deltas: a few bytes a batch.
		e.varint(b.Base - prev)
		e.varint(b.Last - b.Base)
		prev = b.Last
		e.varint(int64(b.Epoch))
		e.b = binary.BigEndian.AppendUint32(e.b, b.CRC)
		e.varint(int64(b.Size))
		e.varint(b.MaxTimestamp)
		e.varint(int64(b.Count))
		e.varint(b.ProducerID)
		e.varint(int64(b.BaseSequence))
		e.b = append(e.b, byte(b.Flags))
		if !p.Hashed {
			continue
		}
		e.uvarint(uint64(len(b.Records)))
		for _, r := range b.Records {
			e.varint(r.Offset - b.Base)
			e.b = binary.BigEndian.AppendUint64(e.b, r.Key)
			e.b = binary.BigEndian.AppendUint64(e.b, r.Sum)
			e.bool(r.Tombstone)
		}
	}
}

// digestSource reads a digest.
type digestSource struct {
	path   string
	f      *os.File
	zr     *zstd.Decoder
	r      *bufio.Reader
	broker Broker
	n      int
	done   bool
	frame  bytes.Buffer
}

// OpenDigest opens a digest and reads its broker frame. Any fault of the
// file is an *InputError naming it.
func OpenDigest(path string) (Source, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := readDigest(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.f = f
	return s, nil
}

func readDigest(path string, r io.Reader) (*digestSource, error) {
	s := &digestSource{path: path}
	head := make([]byte, len(digestMagic)+1)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(digestMagic)]) != digestMagic {
		return nil, s.fault("not a logtool digest")
	}
	if v := head[len(digestMagic)]; v != DigestVersion {
		return nil, s.fault(fmt.Sprintf("a digest of format version %d, which this logtool (version %d) does not read: make the digests and compare them with one logtool release", v, DigestVersion))
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	s.zr = zr
	s.r = bufio.NewReader(zr)
	body, err := s.next()
	if err != nil {
		zr.Close()
		return nil, err
	}
	d := dec{b: body}
	if d.byte() != frameBroker {
		zr.Close()
		return nil, s.fault("the first frame is not the broker's")
	}
	b := &s.broker
	b.Name = d.str()
	b.NodeID = int32(d.varint())
	b.ClusterID = d.str()
	for n := d.count(1); n > 0; n-- {
		b.Dirs = append(b.Dirs, d.str())
	}
	for n := d.count(1); n > 0; n-- {
		b.DirectoryIDs = append(b.DirectoryIDs, d.str())
	}
	if d.err != nil || len(d.b) > 0 {
		zr.Close()
		return nil, s.fault("a damaged broker frame")
	}
	b.Digest = path
	return s, nil
}

func (s *digestSource) fault(msg string) error {
	return &InputError{fmt.Errorf("%s: %s", s.path, msg)}
}

// next reads a frame and checks its CRC.
func (s *digestSource) next() ([]byte, error) {
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, s.cut(err)
	}
	if n > maxFrame {
		return nil, s.fault(fmt.Sprintf("a frame of %d bytes: damaged", n))
	}
	s.frame.Reset()
	// Copied as it comes: a damaged length allocates nothing it does not read.
	if _, err := io.CopyN(&s.frame, s.r, int64(n)+4); err != nil {
		return nil, s.cut(err)
	}
	b := s.frame.Bytes()
	body, sum := b[:n], binary.BigEndian.Uint32(b[n:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, s.fault(fmt.Sprintf("checksum mismatch in frame %d: damaged", s.n+1))
	}
	if len(body) == 0 {
		return nil, s.fault("an empty frame")
	}
	return body, nil
}

func (s *digestSource) cut(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.fault("truncated: it ends before its last frame")
	}
	return s.fault("damaged: " + err.Error())
}

func (s *digestSource) Broker() Broker { return s.broker }

func (s *digestSource) Close() error {
	if s.zr != nil {
		s.zr.Close()
	}
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

func (s *digestSource) Next() (*Partition, error) {
	if s.done {
		return nil, nil
	}
	body, err := s.next()
	if err != nil {
		return nil, err
	}
	d := dec{b: body}
	switch d.byte() {
	case frameEnd:
		if n := d.uvarint(); d.err != nil || int(n) != s.n || len(d.b) > 0 {
			return nil, s.fault("the last frame does not count the partitions read: damaged")
		}
		if _, err := s.r.ReadByte(); err != io.EOF {
			return nil, s.fault("data after the last frame")
		}
		s.done = true
		return nil, nil
	case framePartition:
	default:
		return nil, s.fault(fmt.Sprintf("frame %d is of no known kind", s.n+2))
	}
	p := d.partition()
	if d.err != nil || len(d.b) > 0 {
		return nil, s.fault(fmt.Sprintf("frame %d is damaged", s.n+2))
	}
	s.n++
	return p, nil
}

// dec reads a frame body; the first fault sticks in err.
type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("short frame")

func (d *dec) fail() { d.err, d.b = errShort, nil }

func (d *dec) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) bool() bool { return d.byte() != 0 }

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items of at least min bytes each, refusing more
// than the frame can hold.
func (d *dec) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *dec) fixed(n int) []byte {
	if len(d.b) < n {
		d.fail()
		return make([]byte, n)
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) str() string { return string(d.fixed(d.count(1))) }

func (d *dec) partition() *Partition {
	p := &Partition{Source: d.str(), Topic: d.str(), Partition: int32(d.varint()), HasTopicID: d.bool()}
	copy(p.TopicID[:], d.fixed(16))
	p.LogStartOffset, p.LogEndOffset, p.HighWatermark = d.varint(), d.varint(), d.varint()
	p.HighWatermarkKnown, p.Hashed = d.bool(), d.bool()
	for n := d.count(2); n > 0; n-- {
		p.Epochs = append(p.Epochs, checkpoint.EpochEntry{Epoch: int32(d.varint()), StartOffset: d.varint()})
	}
	for n := d.count(5); n > 0; n-- {
		p.Damage = append(p.Damage, Damage{File: d.str(), Pos: d.varint(), Msg: d.str(), From: d.varint(), To: d.varint()})
	}
	n := d.count(14)
	if n > 0 {
		p.Batches = make([]Batch, 0, n)
	}
	prev := int64(0)
	for ; n > 0 && d.err == nil; n-- {
		var b Batch
		b.Base = prev + d.varint()
		b.Last = b.Base + d.varint()
		prev = b.Last
		b.Epoch = int32(d.varint())
		b.CRC = binary.BigEndian.Uint32(d.fixed(4))
		b.Size = int32(d.varint())
		b.MaxTimestamp = d.varint()
		b.Count = int32(d.varint())
		b.ProducerID = d.varint()
		b.BaseSequence = int32(d.varint())
		b.Flags = Flags(d.byte())
		if p.Hashed {
			k := d.count(18)
			b.Records = make([]Record, 0, k)
			for ; k > 0; k-- {
				off := b.Base + d.varint()
				key := binary.BigEndian.Uint64(d.fixed(8))
				sum := binary.BigEndian.Uint64(d.fixed(8))
				b.Records = append(b.Records, Record{Offset: off, Key: key, Sum: sum, Tombstone: d.bool()})
			}
		}
		p.Batches = append(p.Batches, b)
	}
	return p
}
