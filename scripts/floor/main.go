// Command floor does the least any tool must do to check the batches of
// Kafka .log files: read every byte and compute every batch's checksum, on
// all cores, and nothing else. With -lines it also prints each v2 batch's
// line as Kafka's DumpLogSegments does (the lines of a shallow dump), made
// on the same cores, with the standard library's formatting. scripts/bench.sh
// times both next to cat and to the commands that do this and more (a
// shallow dump, reindex --check), so that each run shows how much of their
// ratio to cat the host leaves them.
//
// It shares no code with logtool: its framing is the length field alone,
// its checksums are hash/crc32's. Each file is split, as logtool splits it,
// at the positions of its .index at least 2 MiB apart, and the ranges are
// read by GOMAXPROCS goroutines into 256 KiB buffers. It exits 1 when a
// batch does not frame or a checksum does not hold, which bench data never
// does, so that its work cannot be skipped unnoticed.
//
//	go run ./scripts/floor [-lines] FILE.log...
package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"strings"
)

const (
	rangeBytes = 2 << 20
	bufBytes   = 256 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type span struct {
	f           *os.File
	start, stop int64
}

// result is what the goroutine that read a span found: its lines, or why
// it stopped.
type result struct {
	text []byte
	err  error
	done chan struct{}
}

func main() {
	args := os.Args[1:]
	lines := len(args) > 0 && args[0] == "-lines"
	if lines {
		args = args[1:]
	}
	var spans []span
	for _, name := range args {
		s, err := split(name)
		if err != nil {
			fail(err)
		}
		spans = append(spans, s...)
	}
	results := make([]result, len(spans))
	work := make(chan int, len(spans))
	for i := range spans {
		results[i].done = make(chan struct{})
		work <- i
	}
	close(work)
	workers := runtime.GOMAXPROCS(0)
	// A goroutine takes a text buffer before a span, so the spans holding
	// buffers are always the first ones not yet written.
	texts := make(chan []byte, 2*workers+2)
	for range cap(texts) {
		texts <- nil
	}
	for range workers {
		go func() {
			buf := make([]byte, bufBytes)
			for {
				text := <-texts
				i, ok := <-work
				if !ok {
					return
				}
				r := &results[i]
				if lines && text == nil {
					text = make([]byte, 0, rangeBytes)
				}
				buf, r.text, r.err = check(spans[i], buf, text, lines)
				close(r.done)
			}
		}()
	}
	for i := range results {
		r := &results[i]
		<-r.done
		if r.err != nil {
			fail(r.err)
		}
		if _, err := os.Stdout.Write(r.text); err != nil {
			fail(err)
		}
		texts <- r.text[:0]
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}

// split cuts a file into ranges at its offset index's positions.
func split(name string) ([]span, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	idx, _ := os.ReadFile(strings.TrimSuffix(name, ".log") + ".index")
	var spans []span
	start := int64(0)
	for i := 0; i+8 <= len(idx); i += 8 {
		pos := int64(binary.BigEndian.Uint32(idx[i+4:]))
		if pos >= size || i > 0 && pos == 0 {
			break
		}
		if pos >= start+rangeBytes {
			spans = append(spans, span{f, start, pos})
			start = pos
		}
	}
	return append(spans, span{f, start, size}), nil
}

// check reads the batches of s into buf and checks their checksums; with
// lines, it appends their lines to text.
func check(s span, buf, text []byte, lines bool) ([]byte, []byte, error) {
	var at int64 // the file position of buf[0]
	var n int64  // bytes in buf
	fill := func(pos, want int64) error {
		if want > int64(len(buf)) {
			buf = make([]byte, want)
		}
		got, err := s.f.ReadAt(buf, pos)
		at, n = pos, int64(got)
		if n < want {
			return fmt.Errorf("%s: short read at %d: %v", s.f.Name(), pos, err)
		}
		return nil
	}
	for pos := s.start; pos < s.stop; {
		if pos+12 > at+n {
			if err := fill(pos, 12); err != nil {
				return buf, text, err
			}
		}
		size := 12 + int64(int32(binary.BigEndian.Uint32(buf[pos-at+8:])))
		if size < 22 {
			return buf, text, fmt.Errorf("%s: no batch frames at %d", s.f.Name(), pos)
		}
		if pos+size > at+n {
			if err := fill(pos, size); err != nil {
				return buf, text, err
			}
		}
		e := buf[pos-at : pos-at+size]
		if !valid(e) {
			return buf, text, fmt.Errorf("%s: checksum mismatch at %d", s.f.Name(), pos)
		}
		if lines {
			if e[16] != 2 {
				return buf, text, fmt.Errorf("%s: -lines prints v2 batches only; byte %d holds magic %d", s.f.Name(), pos, e[16])
			}
			text = appendLine(text, e, pos)
		}
		pos += size
	}
	return buf, text, nil
}

// valid checks an entry's checksum: CRC32C from the attributes on in a v2
// batch, CRC32 from the magic byte on in a legacy message.
func valid(e []byte) bool {
	switch e[16] {
	case 2:
		return len(e) >= 61 && crc32.Checksum(e[21:], castagnoli) == binary.BigEndian.Uint32(e[17:])
	case 0, 1:
		return crc32.ChecksumIEEE(e[16:]) == binary.BigEndian.Uint32(e[12:])
	}
	return false
}

var codecs = [8]string{"none", "gzip", "snappy", "lz4", "zstd", "5", "6", "7"}

// appendLine appends the line of the valid v2 batch e, at pos, as
// DumpLogSegments prints it.
func appendLine(l, e []byte, pos int64) []byte {
	u32 := func(i int) int64 { return int64(int32(binary.BigEndian.Uint32(e[i:]))) }
	u64 := func(i int) int64 { return int64(binary.BigEndian.Uint64(e[i:])) }
	attrs := e[22]
	base, delta, seq := u64(0), u32(23), u32(53)
	lastSeq := seq
	if seq != -1 {
		// Kafka's sequences wrap past MaxInt32 to 0.
		lastSeq = (seq + delta) % (1 << 31)
	}
	l = append(l, "baseOffset: "...)
	l = strconv.AppendInt(l, base, 10)
	l = append(l, " lastOffset: "...)
	l = strconv.AppendInt(l, base+delta, 10)
	l = append(l, " count: "...)
	l = strconv.AppendInt(l, u32(57), 10)
	l = append(l, " baseSequence: "...)
	l = strconv.AppendInt(l, seq, 10)
	l = append(l, " lastSequence: "...)
	l = strconv.AppendInt(l, lastSeq, 10)
	l = append(l, " producerId: "...)
	l = strconv.AppendInt(l, u64(43), 10)
	l = append(l, " producerEpoch: "...)
	l = strconv.AppendInt(l, int64(int16(binary.BigEndian.Uint16(e[51:]))), 10)
	l = append(l, " partitionLeaderEpoch: "...)
	l = strconv.AppendInt(l, u32(12), 10)
	l = append(l, " isTransactional: "...)
	l = strconv.AppendBool(l, attrs&0x10 != 0)
	l = append(l, " isControl: "...)
	l = strconv.AppendBool(l, attrs&0x20 != 0)
	l = append(l, " deleteHorizonMs: "...)
	if attrs&0x40 != 0 {
		l = append(l, "OptionalLong["...)
		l = strconv.AppendInt(l, u64(27), 10)
		l = append(l, ']')
	} else {
		l = append(l, "OptionalLong.empty"...)
	}
	l = append(l, " position: "...)
	l = strconv.AppendInt(l, pos, 10)
	if attrs&0x08 != 0 {
		l = append(l, " LogAppendTime: "...)
	} else {
		l = append(l, " CreateTime: "...)
	}
	l = strconv.AppendInt(l, u64(35), 10)
	l = append(l, " size: "...)
	l = strconv.AppendInt(l, int64(len(e)), 10)
	l = append(l, " magic: 2 compresscodec: "...)
	l = append(l, codecs[attrs&7]...)
	l = append(l, " crc: "...)
	l = strconv.AppendUint(l, uint64(binary.BigEndian.Uint32(e[17:])), 10)
	return append(l, " isvalid: true\n"...)
}
