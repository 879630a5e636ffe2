package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// jsonish returns n bytes of deterministic JSON lines shaped like typical
// Kafka values: repeated keys, varying ids and timestamps, some free text.
func jsonish(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"order", "created", "payment", "shipped", "customer", "warehouse", "berlin", "lisbon", "retry"}
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"id":%d,"ts":%d,"user":"u%05d","event":"%s","city":"%s","amount":%d.%02d,"note":"%s %s"}`+"\n",
			i, 1700000000000+int64(i)*37+r.Int64N(1000), r.IntN(20000), words[r.IntN(4)], words[6+r.IntN(3)],
			r.IntN(500), r.IntN(100), words[r.IntN(len(words))], words[r.IntN(len(words))])
	}
	return b[:n]
}

// random returns n incompressible bytes.
func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// lz4Frame builds an LZ4 frame with the given FLG and BD bytes, a correct
// header checksum, the given blocks (each with its size word) and an end
// mark.
func lz4Frame(flg, bd byte, blocks ...[]byte) []byte {
	f := []byte{0x04, 0x22, 0x4D, 0x18, flg, bd}
	f = append(f, lz4HeaderChecksum(f, 1))
	for _, b := range blocks {
		f = append(f, b...)
	}
	return append(f, 0, 0, 0, 0)
}

// lz4Block compresses data into one block with its size word.
func lz4Block(data []byte) []byte {
	var c lz4.Compressor
	b := make([]byte, 4+lz4.CompressBlockBound(len(data)))
	n, err := c.CompressBlock(data, b[4:])
	if err != nil || n == 0 {
		panic(fmt.Sprintf("lz4 block did not compress: %d, %v", n, err))
	}
	binary.LittleEndian.PutUint32(b, uint32(n))
	return b[:4+n]
}

// zstdStream compresses data with klauspost's streaming writer. Flushing
// before Close makes it write the header before it knows the content size,
// so like zstd-jni's output stream it records a window (8 MiB) and no content
// size.
func zstdStream(data []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		panic(err)
	}
	if _, err := w.Write(data); err != nil {
		panic(err)
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
