package checkpoint

import (
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// testID encodes the bytes 1 to 16.
const testID = "AQIDBAUGBwgJCgsMDQ4PEA"

var testIDBytes = TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func TestParseTopicID(t *testing.T) {
	tests := []struct {
		in   string
		want TopicID
		err  string
	}{
		{in: testID, want: testIDBytes},
		{in: testID + "==", want: testIDBytes},
		// Java ignores the unused low bits of the last character: A is 000000, B is 000001.
		{in: testID[:21] + "B", want: testIDBytes},
		{in: "AAAAAAAAAAAAAAAAAAAAAQ", want: TopicID{15: 1}},
		{in: "AAAAAAAAAAAAAAAAAAAAAA", err: "all zero"},
		{in: "", err: "decodes to 0 bytes"},
		{in: testID[:21], err: "not base64url"},
		{in: testID + "A", err: "decodes to 17 bytes"},
		{in: testID + "AA", err: "decodes to 18 bytes"},
		{in: testID + "AAA", err: "longer than 24"},
		{in: testID + "=", err: "not base64url"},
		{in: "AQIDBAUGBwgJCgsMDQ4P+A", err: "not base64url"},
		{in: "AQIDBAUGBwgJCgsMDQ4P/A", err: "not base64url"},
		{in: "AQIDBAUGBwgJCgsMDQ4\nPEA", err: "not base64url"},
		{in: "AQIDBAUGBwgJCgsMDQ4PEA ", err: "not base64url"},
	}
	for _, tt := range tests {
		got, err := ParseTopicID(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseTopicID(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseTopicID(%q) = %x, %v; want %x", tt.in, got, err, tt.want)
		}
	}
	if s := testIDBytes.String(); s != testID {
		t.Errorf("String() = %q, want %q", s, testID)
	}
}

func TestReadPartitionMetadata(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want PartitionMetadata
		pos  int64
		err  string
	}{
		{name: "as written", in: "version: 0\ntopic_id: " + testID, want: PartitionMetadata{0, testIDBytes}},
		{name: "final newline", in: "version: 0\ntopic_id: " + testID + "\n", want: PartitionMetadata{0, testIDBytes}},
		{name: "CRLF", in: "version: 0\r\ntopic_id: " + testID + "\r\n", want: PartitionMetadata{0, testIDBytes}},
		{name: "runs of white space", in: "version:\t 0\ntopic_id:  " + testID, want: PartitionMetadata{0, testIDBytes}},
		{name: "later version", in: "version: 3\ntopic_id: " + testID, want: PartitionMetadata{3, testIDBytes}},
		{name: "later lines ignored", in: "version: 0\ntopic_id: " + testID + "\ngarbage", want: PartitionMetadata{0, testIDBytes}},

		{name: "empty", in: "", pos: 0, err: "line 1: missing"},
		{name: "no space after colon", in: "version:0\ntopic_id: " + testID, pos: 0, err: `line 1: malformed "version:0"`},
		{name: "wrong key", in: "Version: 0\ntopic_id: " + testID, pos: 0, err: "line 1: malformed"},
		{name: "key with space", in: "version : 0\ntopic_id: " + testID, pos: 0, err: "line 1: malformed"},
		{name: "version not a number", in: "version: zero\ntopic_id: " + testID, pos: 0, err: `line 1: version "zero" is not an int32`},
		{name: "version with trailing space", in: "version: 0 \ntopic_id: " + testID, pos: 0, err: `version "0 " is not an int32`},
		{name: "negative version", in: "version: -1\ntopic_id: " + testID, pos: 0, err: "line 1: unsupported version -1"},
		{name: "no line 2", in: "version: 0\n", pos: 11, err: "line 2: missing"},
		{name: "no line 2 or newline", in: "version: 0", pos: 10, err: "line 2: missing"},
		{name: "blank line 2", in: "version: 0\n\ntopic_id: " + testID, pos: 11, err: `line 2: malformed ""`},
		{name: "swapped", in: "topic_id: " + testID + "\nversion: 0", pos: 0, err: "line 1: malformed"},
		{name: "zero id", in: "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", pos: 11, err: "line 2: bad topic ID"},
		{name: "short id", in: "version: 0\ntopic_id: AAAA", pos: 11, err: "line 2: bad topic ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPartitionMetadata([]byte(tt.in), "pm")
			if tt.err != "" {
				checkCorrupt(t, err, "pm", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPartitionMetadataErrorWrapsCause(t *testing.T) {
	_, err := ReadPartitionMetadata([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"), "pm")
	ce, ok := logfmt.AsCorrupt(err)
	if !ok || ce.Err == nil || !strings.Contains(ce.Err.Error(), "all zero") {
		t.Fatalf("error = %v, want a CorruptError wrapping the id error", err)
	}
}

func TestAppendPartitionMetadata(t *testing.T) {
	m := PartitionMetadata{Version: 0, TopicID: testIDBytes}
	want := "version: 0\ntopic_id: " + testID
	if got := AppendPartitionMetadata(nil, m); string(got) != want {
		t.Fatalf("AppendPartitionMetadata = %q, want %q", got, want)
	}
}
