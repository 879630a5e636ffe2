package logfmt_test

import (
	"bytes"
	"fmt"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// A deep read on four workers: the loop is the one a single goroutine
// runs over a SegmentReader.
func ExampleDeepReader() {
	var seg []byte
	for i := range 3 {
		o := logfmt.DefaultBatchOptions(int64(i))
		o.Compression = codec.Zstd
		seg, _ = logfmt.AppendBatch(seg, o, []logfmt.Record{{Offset: int64(i), Key: []byte("k"), Value: fmt.Appendf(nil, "v%d", i)}})
	}
	sr := logfmt.NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "00000000000000000000.log")
	d := logfmt.NewDeepReader(sr, 4)
	defer d.Close()
	var it logfmt.RecordIter
	for d.Next() {
		b := d.Batch()
		if err := b.Validate(); err != nil {
			fmt.Println(err)
			continue
		}
		if err := it.Reset(b); err != nil {
			fmt.Println(err)
			continue
		}
		for it.Next() {
			fmt.Printf("%d %s=%s\n", it.Record().Offset, it.Record().Key, it.Record().Value)
		}
		if err := it.Err(); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(d.End(), d.Err())
	// Output:
	// 0 k=v0
	// 1 k=v1
	// 2 k=v2
	// clean <nil>
}
