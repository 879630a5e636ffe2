package dump

import (
	"testing"

	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// TestLegacyWrapperCount: a wrapper's count is its number of inner
// messages: none for an empty one (which Kafka rejects), unknown (null) for
// one that cannot be decompressed, never the one of a plain message.
func TestLegacyWrapperCount(t *testing.T) {
	empty, err := codectest.Compress(nil, codec.Gzip, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	two := logfmt.AppendLegacyMessage(nil, 1, 0, 0, 7, nil, []byte("a"))
	two = logfmt.AppendLegacyMessage(two, 1, 1, 0, 7, nil, []byte("b"))
	inner, err := codectest.Compress(nil, codec.Gzip, two, 1)
	if err != nil {
		t.Fatal(err)
	}
	seg := logfmt.AppendLegacyMessage(nil, 1, 0, 0, 5, nil, []byte("v"))
	seg = logfmt.AppendLegacyMessage(seg, 1, 1, int8(codec.Gzip), 6, nil, empty)
	seg = logfmt.AppendLegacyMessage(seg, 1, 3, int8(codec.Gzip), 7, nil, inner)
	seg = logfmt.AppendLegacyMessage(seg, 1, 4, int8(codec.Gzip), 8, nil, []byte("not gzip"))
	path := writeFile(t, seg)

	o := DefaultOptions()
	o.Summary = true
	_, objs := runJSON(t, o, path)
	var got []any
	for _, b := range ofType(objs, "batch") {
		got = append(got, b["count"])
	}
	if want := []any{float64(1), float64(0), float64(2), nil}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("counts %v, want %v", got, want)
	}
	if n := len(ofType(objs, "problem")); n != 2 {
		t.Errorf("%d problems, want the empty and the undecompressable wrapper", n)
	}
	// The unreadable wrapper counts as one entry; the empty one as none.
	if s := ofType(objs, "summary"); len(s) != 1 || s[0].num("records") != 4 {
		t.Errorf("summary %v, want 4 records", s)
	}
}
