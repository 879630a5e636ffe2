package hugemem

import (
	"sync"
	"syscall"
)

// mapAnon maps size bytes of zeroed private memory and asks for huge pages;
// the advice is a hint, which a kernel without transparent huge pages
// ignores or refuses.
func mapAnon(size int) ([]byte, func(), bool) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, false
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b, sync.OnceFunc(func() { _ = syscall.Munmap(b) }), true
}
