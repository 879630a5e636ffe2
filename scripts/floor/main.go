// Command floor does the least any tool must do to check the batches of
// Kafka .log files: read every byte and compute every batch's checksum, on
// all cores, and nothing else. scripts/bench.sh times it next to cat and to
// the commands that do this and more (a shallow dump, reindex --check), so
// that each run shows how much of their ratio to cat the host leaves them.
//
// It shares no code with logtool: its framing is the length field alone,
// its checksums are hash/crc32's. Each file is split, as logtool splits it,
// at the positions of its .index at least 2 MiB apart, and the ranges are
// read by GOMAXPROCS goroutines into 256 KiB buffers. It exits 1 when a
// batch does not frame or a checksum does not hold, which bench data never
// does, so that its work cannot be skipped unnoticed.
//
//	go run ./scripts/floor FILE.log...
package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strings"
	"sync"
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

func main() {
	var spans []span
	for _, name := range os.Args[1:] {
		s, err := split(name)
		if err != nil {
			fail(err)
		}
		spans = append(spans, s...)
	}
	work := make(chan span, len(spans))
	for _, s := range spans {
		work <- s
	}
	close(work)
	errs := make(chan error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range cap(errs) {
		wg.Go(func() {
			buf := make([]byte, bufBytes)
			for s := range work {
				var err error
				if buf, err = check(s, buf); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		fail(err)
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

// check reads the batches of s and checks their checksums.
func check(s span, buf []byte) ([]byte, error) {
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
				return buf, err
			}
		}
		size := 12 + int64(int32(binary.BigEndian.Uint32(buf[pos-at+8:])))
		if size < 22 {
			return buf, fmt.Errorf("%s: no batch frames at %d", s.f.Name(), pos)
		}
		if pos+size > at+n {
			if err := fill(pos, size); err != nil {
				return buf, err
			}
		}
		if !valid(buf[pos-at : pos-at+size]) {
			return buf, fmt.Errorf("%s: checksum mismatch at %d", s.f.Name(), pos)
		}
		pos += size
	}
	return buf, nil
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
