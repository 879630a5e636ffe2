package checkpoint

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadCleaner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want CleanerCheckpoint
		pos  int64
		err  string
	}{
		{name: "known time", in: "1\n1234 1700000000000\n", want: CleanerCheckpoint{1234, 1700000000000}},
		{name: "unknown time", in: "1\n0 -1\n", want: CleanerCheckpoint{0, -1}},
		{name: "largest", in: "1\n9223372036854775807 9223372036854775807\n", want: CleanerCheckpoint{1<<63 - 1, 1<<63 - 1}},

		{name: "empty", in: "", pos: 0, err: "line 1: \"\" does not end in a newline"},
		{name: "version 0", in: "0\n5 -1\n", pos: 0, err: "line 1: unsupported version 0, want 1"},
		{name: "version padded", in: "01\n5 -1\n", pos: 0, err: "line 1: malformed version \"01\""},
		{name: "no second newline", in: "1\n5 -1", pos: 2, err: "line 2: \"5 -1\" does not end in a newline"},
		{name: "one field", in: "1\n5\n", pos: 2, err: "line 2: malformed \"5\""},
		{name: "tab", in: "1\n5\t-1\n", pos: 2, err: "line 2: malformed"},
		{name: "two spaces", in: "1\n5  -1\n", pos: 4, err: "line 2: clean time \" -1\""},
		{name: "negative offset", in: "1\n-5 -1\n", pos: 2, err: "first dirty offset \"-5\" is not an offset"},
		{name: "plus sign", in: "1\n+5 -1\n", pos: 2, err: "first dirty offset \"+5\""},
		{name: "time below -1", in: "1\n5 -2\n", pos: 4, err: "clean time \"-2\" is neither"},
		{name: "minus zero", in: "1\n5 -0\n", pos: 4, err: "clean time \"-0\""},
		{name: "CRLF", in: "1\r\n5 -1\r\n", pos: 0, err: "line 1: malformed version \"1\\r\""},
		{name: "trailing line", in: "1\n5 -1\n\n", pos: 7, err: "unexpected bytes after line 2"},
		{name: "huge", in: "1\n5 -1\n" + strings.Repeat("x", 1<<20), pos: 7, err: "unexpected bytes after line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadCleaner(strings.NewReader(tt.in), "cc")
			if tt.err != "" {
				checkCorrupt(t, err, "cc", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if b := AppendCleaner(nil, got); string(b) != tt.in {
				t.Fatalf("AppendCleaner = %q, want the input %q", b, tt.in)
			}
		})
	}
}

func TestAppendCleaner(t *testing.T) {
	if got := AppendCleaner([]byte("x"), CleanerCheckpoint{FirstDirtyOffset: 42, LastCleanTimeMs: -1}); string(got) != "x1\n42 -1\n" {
		t.Fatalf("AppendCleaner = %q", got)
	}
}

func TestReadCleanerIOError(t *testing.T) {
	boom := errors.New("boom")
	if _, err := ReadCleaner(io.MultiReader(strings.NewReader("1\n"), failingReader{boom}), "cc"); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want one wrapping %v", err, boom)
	}
}
