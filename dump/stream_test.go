package dump

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
)

// TestLargeBytesStreamed: keys, values, header keys and header values far
// larger than a chunk, which dump writes into the line a piece at a time,
// read back as the bytes they are from JSON (a string, or the base64
// object of bytes that are not UTF-8) and as their whole text in the text
// line, with --print-headers and in a deep dump without data, whose
// formatting stage does not take them.
func TestLargeBytesStreamed(t *testing.T) {
	text := []byte(strings.Repeat("héllo \"wörld\"\n\x01\\ ", 15000)) // 300 KiB
	bad := append([]byte{0xff}, text...)
	recs := []logfmt.Record{
		{Offset: 0, Timestamp: 1, Key: text, Value: bad, Headers: []logfmt.Header{{Key: bad, Value: text}}},
		{Offset: 1, Timestamp: 2, Key: bad, Value: text, Headers: []logfmt.Header{{Key: text, Value: bad}}},
	}
	var seg []byte
	for i := range recs {
		var err error
		if seg, err = logfmt.AppendBatch(seg, logfmt.DefaultBatchOptions(int64(i)), recs[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	path := writeFile(t, seg)

	o := DefaultOptions()
	o.PrintData = true
	_, objs := runJSON(t, o, path)
	back := func(v any) []byte {
		if m, ok := v.(map[string]any); ok {
			b, err := base64.StdEncoding.DecodeString(m["base64"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		return []byte(v.(string))
	}
	got := ofType(objs, "record")
	if len(got) != len(recs) {
		t.Fatalf("%d records", len(got))
	}
	for i, r := range recs {
		h := got[i]["headers"].([]any)[0].(map[string]any)
		if !bytes.Equal(back(got[i]["key"]), r.Key) || !bytes.Equal(back(got[i]["value"]), r.Value) ||
			!bytes.Equal(back(h["key"]), r.Headers[0].Key) || !bytes.Equal(back(h["value"]), r.Headers[0].Value) {
			t.Errorf("JSON record %d does not read back as its bytes", i)
		}
	}

	str := func(b []byte) string { return string(textdec.String.AppendText(nil, b)) }
	for _, o := range []Options{{PrintData: true, PrintHeaders: true}, {Deep: true}} {
		opts := DefaultOptions()
		opts.PrintData, opts.PrintHeaders, opts.Deep = o.PrintData, o.PrintHeaders, o.Deep
		out := output(t, opts, path)
		for i, r := range recs {
			want := "headerKeys: [" + str(r.Headers[0].Key) + "]"
			if o.PrintData {
				want += " key: " + str(r.Key) + " payload: " + str(r.Value) +
					" headers: [" + str(r.Headers[0].Key) + "=" + str(r.Headers[0].Value) + "]"
			}
			// Contains: the text has newlines of its own.
			if !strings.Contains(out, want) {
				t.Errorf("%+v: record %d's line is not its bytes' text", o, i)
			}
		}
	}
}
