package hugemem

import (
	"reflect"
	"runtime"
	"testing"
	"unsafe"
)

type entry struct {
	a, b uint64
	c    int64
}

func TestSlice(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/24 + 1, 3 * MinBytes / 24} {
		s, free := Slice[entry](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("n=%d: len %d cap %d", n, len(s), cap(s))
		}
		for i := range s {
			if s[i] != (entry{}) {
				t.Fatalf("n=%d: entry %d not zero", n, i)
			}
			s[i] = entry{uint64(i), uint64(i) * 3, -int64(i)}
		}
		for i := range s {
			if s[i] != (entry{uint64(i), uint64(i) * 3, -int64(i)}) {
				t.Fatalf("n=%d: entry %d lost", n, i)
			}
		}
		// On Linux a table of a huge page or more starts on one, so that
		// the kernel can back all of it with huge pages.
		if big := uintptr(n)*unsafe.Sizeof(entry{}) >= MinBytes; big && runtime.GOOS == "linux" {
			if p := uintptr(unsafe.Pointer(&s[0])); p%MinBytes != 0 {
				t.Errorf("n=%d: starts at %#x, not on a huge page", n, p)
			}
		}
		free()
		free() // a second call does nothing
	}
}

func TestSliceZeroSize(t *testing.T) {
	s, free := Slice[struct{}](MinBytes)
	if len(s) != MinBytes {
		t.Fatalf("len %d", len(s))
	}
	free()
}

func TestSlicePointers(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a type holding pointers was accepted")
		}
	}()
	Slice[struct{ p *int }](MinBytes)
}

func TestPointerFree(t *testing.T) {
	if !pointerFree(reflect.TypeFor[[4]struct{ a int32 }]()) {
		t.Error("an array of structs of integers holds no pointers")
	}
	for _, typ := range []any{"", []int{}, map[int]int{}, new(int)} {
		if pointerFree(reflect.TypeOf(typ)) {
			t.Errorf("%T holds pointers", typ)
		}
	}
}
