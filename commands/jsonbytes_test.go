package commands

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// byteCases are the keys, values and header keys and values every JSON
// output must give back exactly: bytes Java's decoder turns into U+FFFD, a
// NUL, the halves of a split UTF-8 character, and text.
var byteCases = [][]byte{
	{0xff, 0xff, 0xff, 0xff},
	{0x00},
	{0xc3},      // first half of "é"
	{0xa9, 'x'}, // its second half
	[]byte("héllo"),
}

// fromJSON gives back the bytes of a JSON byte string: a string is its
// UTF-8, {"base64": ...} its decoded base64; when plain is set a string is
// base64 itself (export's default).
func fromJSON(t *testing.T, v any, plain bool) []byte {
	t.Helper()
	switch v := v.(type) {
	case string:
		if plain {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatalf("%q: %v", v, err)
			}
			return b
		}
		return []byte(v)
	case map[string]any:
		if s, ok := v["base64"].(string); ok && len(v) == 1 {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			return b
		}
	}
	t.Fatalf("not a JSON byte string: %#v", v)
	return nil
}

// TestJSONKeepsBytes: dump --print-data-log, grep and export give back every
// key, value, header key and header value byte for byte, in JSON where only
// valid UTF-8 is a string and anything else is marked base64. Before, dump
// and grep wrote U+FFFD for bytes that are not UTF-8.
func TestJSONKeepsBytes(t *testing.T) {
	part := filepath.Join(t.TempDir(), "bytes-0")
	if err := os.Mkdir(part, 0o755); err != nil {
		t.Fatal(err)
	}
	var recs []logfmt.Record
	for i, b := range byteCases {
		recs = append(recs, logfmt.Record{Offset: int64(i), Timestamp: 1_700_000_000_000, Key: b, Value: b,
			Headers: []logfmt.Header{{Key: b, Value: b}}})
	}
	seg, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(0), recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, layout.SegmentName(0, layout.LogExt)), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		typ   string
		plain bool // strings are base64
	}{
		{[]string{"--format", "json", "dump", "--deep-iteration", "--print-data-log", part}, "record", false},
		{[]string{"--format", "json", "grep", "--key-regex", "", part}, "match", true},
		{[]string{"--format", "json", "grep", "--key-regex", "", "--key-decoder", "string", "--value-decoder", "string", part}, "match", false},
		{[]string{"--format", "json", "export", "--encoding", "utf8", part}, "", false},
		{[]string{"--format", "json", "export", part}, "", true},
	} {
		code, stdout, stderr := runLogtool(t, c.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
		}
		i := 0
		sc := bufio.NewScanner(strings.NewReader(stdout))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: not JSON: %s", c.args[2], sc.Bytes())
			}
			if c.typ != "" && m["type"] != c.typ {
				continue
			}
			want := byteCases[i]
			h := m["headers"].([]any)[0].(map[string]any)
			for name, got := range map[string][]byte{
				"key":          fromJSON(t, m["key"], c.plain),
				"value":        fromJSON(t, m["value"], c.plain),
				"header key":   fromJSON(t, h["key"], false),
				"header value": fromJSON(t, h["value"], c.plain),
			} {
				if !bytes.Equal(got, want) {
					t.Errorf("%s: record %d: %s % x, want % x", c.args[2], i, name, got, want)
				}
			}
			i++
		}
		if i != len(byteCases) {
			t.Errorf("%s: %d records, want %d:\n%s", c.args[2], i, len(byteCases), stdout)
		}
	}
}

// pathFields are the JSON fields that hold a path (docs/json.md).
var pathFields = []string{"file", "dir", "out", "output", "logDir", "migratedFile"}

// TestJSONKeepsPathBytes runs every command of TestJSONSchema with its log
// dirs, outputs and fixtures under a directory whose name is not UTF-8, and
// checks that each path field gives back those bytes exactly: a string
// without U+FFFD, or {"base64": ...} holding them. Before, every command but
// dump, grep's matches and export's records wrote U+FFFD for them, and gen
// wrote Go's "\xff" escape, which is not JSON.
func TestJSONKeepsPathBytes(t *testing.T) {
	const bad = "p\xff\xfe\xc3"
	kept := map[string]bool{}
	for _, c := range schemaCases() {
		section := jsonSection(c.args)
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), bad)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, dir)
			}
			logs := filepath.Join(dir, "sample")
			testutil.CopyTree(t, sample, logs)
			var args []string
			for _, a := range c.args {
				a = strings.ReplaceAll(a, "$DIR", dir)
				if rest, ok := strings.CutPrefix(a, sample); ok {
					a = logs + rest
				}
				args = append(args, a)
			}
			_, stdout, _ := runLogtool(t, args...)
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var obj map[string]any
				if json.Unmarshal([]byte(line), &obj) != nil {
					continue // text from a case that asks for it
				}
				for _, name := range pathFields {
					v, ok := obj[name]
					if !ok || v == nil {
						continue
					}
					if s, ok := v.(string); ok && strings.ContainsRune(s, utf8.RuneError) {
						t.Errorf("%s: %s lost its bytes: %s", section, name, line)
						continue
					}
					if bytes.Contains(fromJSON(t, v, false), []byte(bad)) {
						kept[section] = true
					}
				}
			}
		})
	}
	for _, cmd := range []string{"dump", "find", "grep", "verify", "reindex", "upgrade", "migrate-checkpoints", "compact",
		"retention", "export", "salvage", "replay", "replicas", "digest", "gen"} {
		if !kept[cmd] {
			t.Errorf("%s: no path field held the directory's bytes", cmd)
		}
	}
}
