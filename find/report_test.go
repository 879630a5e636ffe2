package find

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// TestFindRecordJSONLossless: the record find prints in JSON keeps bytes
// that are not UTF-8 (as {"base64": ...}) and null apart from empty.
func TestFindRecordJSONLossless(t *testing.T) {
	r := &Result{Found: true, Key: []byte{0xff, 0, 'a'}, Value: nil,
		Headers: []logfmt.Header{{Key: []byte("h"), Value: nil}, {Key: []byte{0xc3}, Value: []byte{}}}}
	b, err := json.Marshal(r.json(Print{Record: true}))
	if err != nil {
		t.Fatal(err)
	}
	const want = `"record":{"key":{"base64":"/wBh"},"value":null,"headers":[{"key":"h","value":null},{"key":{"base64":"ww=="},"value":""}]}`
	if !strings.Contains(string(b), want) {
		t.Errorf("got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(r.json(Print{}))
	if strings.Contains(string(b), `"record"`) {
		t.Errorf("a record without --print-data-log: %s", b)
	}
}
