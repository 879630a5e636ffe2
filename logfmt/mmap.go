package logfmt

import (
	"fmt"
	"runtime/debug"
	"unsafe"
)

// Mapping: a shallow scan of a file in the page cache spends a third of
// its time in the kernel copying the file into the read window. Mapping the
// window instead lets the checksum read the page cache directly; on two
// cores it takes a shallow dump from 2.6 to under 2 times the time of cat.
// Windows stay small so that the mapped pages, which count as the process's
// memory, stay within the memory bounds.

// mapWindowSize is the length of a mapped window.
const mapWindowSize = 16 << 20

// CatchFault runs f, in which the reader's entries are read, and turns a
// fault on its mapped memory into an error naming the file and position.
// Such a fault means the file shrank after it was mapped (another process
// truncated it) or the device failed to read the page; read with a
// buffer, the same events are a short read or an I/O error.
func (s *SegmentReader) CatchFault(f func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		fault, ok := r.(interface{ Addr() uintptr })
		if !ok {
			panic(r)
		}
		pos, ok := s.faultPos(fault.Addr())
		if !ok {
			panic(r)
		}
		err = fmt.Errorf("%s: no data at byte %d: the file shrank while it was read, or the device failed", s.file, pos)
	}()
	f()
	return nil
}

// faultPos is the file position of a faulting address in the mapped
// window. Only a fault there is the file's; anything else is a bug and
// stays a panic.
func (s *SegmentReader) faultPos(addr uintptr) (int64, bool) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.mapping)))
	if s.mapping == nil || addr < base || addr-base >= uintptr(len(s.mapping)) {
		return 0, false
	}
	return s.bufPos + int64(addr-base), true
}
