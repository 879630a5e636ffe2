package zstdframe

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The frames decode, with klauspost's decoder as the judge, to size zero
// bytes.
func TestRLE(t *testing.T) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxWindow(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, size := range []int{1, 128 << 10, 128<<10 + 1, 3 << 20} {
		out, err := d.DecodeAll(RLE(size), nil)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if len(out) != size || !bytes.Equal(out, make([]byte, size)) {
			t.Fatalf("%d bytes: decoded %d bytes, not all zero", size, len(out))
		}
	}
}
