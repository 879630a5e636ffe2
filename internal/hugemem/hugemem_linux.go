package hugemem

import (
	"sync"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64 with
// 4 KiB base pages; on others the alignment merely costs a little room.
const hugePage = 2 << 20

// mapAnon maps size bytes of zeroed private memory starting on a huge page
// boundary, and asks for huge pages; the advice is a hint, which a kernel
// without transparent huge pages ignores or refuses. The mapping is a huge
// page longer than asked, for the alignment; what is never touched takes
// address space only.
func mapAnon(size int) ([]byte, func(), bool) {
	length := (size + hugePage - 1) &^ (hugePage - 1)
	m, err := syscall.Mmap(-1, 0, length+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, false
	}
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(m))) & (hugePage - 1))
	b := m[off : off+length]
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b[:size:size], sync.OnceFunc(func() { _ = syscall.Munmap(m) }), true
}
