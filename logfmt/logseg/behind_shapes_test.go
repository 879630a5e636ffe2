package logseg

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
)

// TestBehindWriterShapes: pieces of exactly one buffer, one
// larger than all three buffers, tiny ones and a last partial buffer, with
// the k-th write to the file failing for each k: without a fault the file
// is the bytes in order; with one, Close (or a Write) reports it and the
// file holds only a prefix of whole buffers, nothing after the failure.
func TestBehindWriterShapes(t *testing.T) {
	var pieces [][]byte
	for i, n := range []int{behindBytes, behindBytes, 1, behindBytes - 1, 5*behindBytes + 7, 3, 3, behindBytes, 100} {
		pieces = append(pieces, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	want := bytes.Join(pieces, nil)
	for k := int64(0); k <= 12; k++ {
		path := filepath.Join(t.TempDir(), "f")
		f, err := safefile.Create(path, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		faults := &safefile.Faults{FailAt: k, Once: true}
		restore := safefile.SetFaultHook(faults.Hook)
		w := newBehindWriter(f)
		var werr error
		for _, p := range pieces {
			if werr = w.Write(p); werr != nil {
				break
			}
		}
		cerr := w.Close()
		restore()
		got, _ := os.ReadFile(f.Name())
		writes := faults.Steps()
		if k == 0 || k > writes {
			if werr != nil || cerr != nil || !bytes.Equal(got, want) {
				t.Fatalf("no fault (%d writes): %v %v, %d bytes of %d equal %t", writes, werr, cerr, len(got), len(want), bytes.Equal(got, want))
			}
			f.Abort()
			continue
		}
		if !errors.Is(cerr, safefile.ErrInjected) {
			t.Fatalf("write %d failed: Close returned %v (Write %v)", k, cerr, werr)
		}
		if int64(len(got)) != (k-1)*behindBytes || !bytes.Equal(got, want[:len(got)]) {
			t.Fatalf("write %d failed: file has %d bytes (prefix %t), want the %d before it", k, len(got), bytes.Equal(got, want[:len(got)]), (k-1)*behindBytes)
		}
		f.Abort()
	}
}
