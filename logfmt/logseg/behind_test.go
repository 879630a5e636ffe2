package logseg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
)

// TestBehindWriter writes pieces of every size, the caller reusing each
// at once, and reads back the same bytes in order.
func TestBehindWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	w := newBehindWriter(f)
	rnd := rand.New(rand.NewPCG(3, 4))
	var want []byte
	piece := make([]byte, 3*behindBytes)
	for len(want) < 3*writebackBytes/2 {
		p := piece[:rnd.IntN(len(piece))]
		if rnd.IntN(4) == 0 {
			p = piece[:rnd.IntN(100)]
		}
		for i := range p {
			p[i] = byte(rnd.Uint32())
		}
		want = append(want, p...)
		if err := w.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(want))
	}
}

// TestBehindWriterError: a write that fails on the writer's goroutine is
// returned by a later Write or by Close, and nothing is written after it.
func TestBehindWriterError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	faults := &safefile.Faults{FailAt: 2, Once: true} // the second write
	defer safefile.SetFaultHook(faults.Hook)()
	w := newBehindWriter(f)
	p := bytes.Repeat([]byte{1}, behindBytes)
	for range 10 {
		if err := w.Write(p); err != nil {
			break
		}
	}
	if err := w.Close(); !errors.Is(err, safefile.ErrInjected) {
		t.Fatalf("Close: %v, want the injected fault", err)
	}
	if fi, err := os.Stat(f.Name()); err != nil || fi.Size() != behindBytes {
		t.Fatalf("temporary file: %v, want the %d bytes of the first write only", fi, behindBytes)
	}
}
