package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/migrate/checkpoints"
)

// migrateLogDir writes a small log directory: topics with '-' and '.', an
// entry whose partition lives elsewhere, and a -future directory.
func migrateLogDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	files := map[string]string{
		"meta.properties":                                                           "version=0\nbroker.id=0\n",
		"cleaner-offset-checkpoint":                                                 "0\n3\norders 0 700\nlegacy.events-v0-snappy 0 12\ngone 3 44\n",
		"orders-0/00000000000000000000.log":                                         "",
		"orders-1/00000000000000000000.log":                                         "",
		"legacy.events-v0-snappy-0/00000000000000000000.log":                        "",
		"orders-1.0123456789abcdef0123456789abcdef-future/00000000000000000000.log": "",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runLogtool(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(append([]string{"logtool"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func readFileOr(t *testing.T, path, missing string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return missing
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMigrateText(t *testing.T) {
	dir := migrateLogDir(t)
	code, out, errOut := runLogtool(t, "migrate-checkpoints", dir)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"PARTITION                  OFFSET  CLEAN TIME  ACTION  FROM                         TO", // the table header
		"orders-0                   700     unknown     write   cleaner-offset-checkpoint:3  orders-0/cleaner-checkpoint\n",
		"gone-3", "no directory gone-3 in this log directory",
		"skipped " + filepath.Join(dir, "orders-1.0123456789abcdef0123456789abcdef-future"),
		dir + ": 2 written, 1 absent; cleaner-offset-checkpoint renamed to cleaner-offset-checkpoint.migrated\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing blanks in %q", line)
		}
	}
	if got := readFileOr(t, filepath.Join(dir, "orders-0", "cleaner-checkpoint"), ""); got != "1\n700 -1\n" {
		t.Errorf("orders-0/cleaner-checkpoint = %q", got)
	}

	code, out, errOut = runLogtool(t, "migrate-checkpoints", "--clean-time", "file-mtime", dir)
	if code != 0 || !strings.Contains(out, "already migrated") || strings.Contains(out, "PARTITION") {
		t.Errorf("second run: exit %d:\n%s", code, out)
	}
	if !strings.HasPrefix(errOut, "logtool: warning: --clean-time file-mtime") || !strings.Contains(errOut, "too early") {
		t.Errorf("no warning about file-mtime: %q", errOut)
	}
}

// TestMigrateLeavesBrokersTemp: the broker's cleaner-offset-checkpoint.tmp,
// cut short by its crash, is the broker's, not a leftover of an interrupted
// migrate-checkpoints; logtool's own <name>.logtool.tmp is removed.
func TestMigrateLeavesBrokersTemp(t *testing.T) {
	dir := migrateLogDir(t)
	theirs := filepath.Join(dir, "cleaner-offset-checkpoint.tmp")
	ours := filepath.Join(dir, "cleaner-offset-checkpoint.logtool.tmp")
	for _, f := range []string{theirs, ours} {
		if err := os.WriteFile(f, []byte("0\n1\norders 0 9\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := runLogtool(t, "migrate-checkpoints", dir); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := readFileOr(t, theirs, "(removed)"); got != "0\n1\norders 0 9\n" {
		t.Errorf("the broker's %s is %q", filepath.Base(theirs), got)
	}
	if got := readFileOr(t, ours, "(removed)"); got != "(removed)" {
		t.Errorf("logtool's own %s was left: %q", filepath.Base(ours), got)
	}
}

func TestMigrateJSON(t *testing.T) {
	dir := migrateLogDir(t)
	for _, args := range [][]string{
		{"--format", "json", "migrate-checkpoints", "--dry-run", "--clean-time", "1700000000000", dir},
		{"migrate-checkpoints", "--format=json", "--clean-time", "2023-11-14T22:13:20Z", dir},
		{"--format", "json", "migrate-checkpoints", "--reverse", dir},
	} {
		code, out, errOut := runLogtool(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		counts := map[string]int{}
		var last map[string]any
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(line), &obj); err != nil {
				t.Fatalf("%v: line %q: %v", args, line, err)
			}
			if obj["type"] == nil || obj["file"] == nil {
				t.Errorf("%v: %q lacks type or file", args, line)
			}
			typ, _ := obj["type"].(string)
			counts[typ]++
			if typ == "checkpoint-entry" && obj["topic"] == "orders" {
				reverse := args[len(args)-2] == "--reverse"
				wantTime := 1700000000000.0
				if obj["cleanTimeMs"] != wantTime || reverse != strings.HasSuffix(obj["from"].(string), "cleaner-checkpoint") {
					t.Errorf("%v: entry %v", args, obj)
				}
			}
			last = obj
		}
		if counts["checkpoint-entry"] != 3 || counts["skipped-dir"] != 1 || counts["migration"] != 1 || last["type"] != "migration" {
			t.Errorf("%v: objects %v, last %v", args, counts, last)
		}
		if last["changed"] != true || last["dryRun"] != (args[3] == "--dry-run") {
			t.Errorf("%v: migration %v", args, last)
		}
	}
	want := "0\n3\ngone 3 44\nlegacy.events-v0-snappy 0 12\norders 0 700\n"
	if got := readFileOr(t, filepath.Join(dir, "cleaner-offset-checkpoint"), "(missing)"); got != want {
		t.Errorf("after forward and reverse the root file is %q, want %q", got, want)
	}
}

func TestMigrateDryRunSample(t *testing.T) {
	const sample = "../testdata/kafka-logs"
	if _, err := os.Stat(sample); err != nil {
		t.Skip("sample log directory missing: ", err)
	}
	before := readFileOr(t, filepath.Join(sample, "cleaner-offset-checkpoint"), "(missing)")
	code, out, errOut := runLogtool(t, "migrate-checkpoints", "--dry-run", sample)
	if code != 0 || !strings.HasPrefix(out, "dry run: nothing is written\n") || !strings.Contains(out, "would be renamed") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if after := readFileOr(t, filepath.Join(sample, "cleaner-offset-checkpoint"), "(missing)"); after != before {
		t.Errorf("dry run changed the sample's root file")
	}
	if _, err := os.Stat(filepath.Join(sample, checkpoints.MigratedFile)); err == nil {
		t.Errorf("dry run created %s", checkpoints.MigratedFile)
	}
}

func TestMigrateExitCodes(t *testing.T) {
	dir := migrateLogDir(t)
	root := filepath.Join(dir, "cleaner-offset-checkpoint")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T)
		args  []string
		code  int
		msg   string
	}{
		{"no log dir", nil, []string{}, ExitUsage, "no LOGDIR"},
		{"clean time with reverse", nil, []string{"--reverse", "--clean-time", "5", dir}, ExitUsage, "forward migration only"},
		{"bad clean time", nil, []string{"--clean-time", "yesterday", dir}, ExitUsage, "--clean-time"},
		{"negative clean time", nil, []string{"--clean-time", "-5", dir}, ExitUsage, "before 1970"},
		{"partition dir", nil, []string{filepath.Join(dir, "orders-0")}, ExitUsage, "is a partition directory"},
		{"missing dir", nil, []string{filepath.Join(dir, "nope")}, ExitUsage, "no such file"},
		{"unknown flag", nil, []string{"--bogus", dir}, ExitUsage, ""},
		{"malformed", func(t *testing.T) {
			if err := os.WriteFile(root, []byte("0\n2\norders 0 5\n../x 0 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{dir}, ExitFailure,
			"logtool: migrate-checkpoints: " + root + ": line 4: invalid topic name \"../x\": character '/' at 2 is not one of [a-zA-Z0-9._-] (at byte 15)\n"},
		{"conflict", func(t *testing.T) {
			if err := os.WriteFile(root, []byte("0\n1\norders 0 5\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "orders-0", "cleaner-checkpoint"), []byte("1\n9 100\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{dir}, ExitRefused, "--overwrite lets the root file win"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			before := readFileOr(t, root, "(missing)")
			code, _, errOut := runLogtool(t, append([]string{"migrate-checkpoints"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errOut, tc.code, tc.msg)
			}
			if strings.Count(errOut, "\n") != 1 && tc.name != "unknown flag" {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if after := readFileOr(t, root, "(missing)"); after != before {
				t.Errorf("the root file changed")
			}
			if _, err := os.Stat(filepath.Join(dir, checkpoints.MigratedFile)); err == nil {
				t.Errorf("%s written", checkpoints.MigratedFile)
			}
		})
	}
}

func TestMigrateHelp(t *testing.T) {
	code, out, _ := runLogtool(t, "migrate-checkpoints", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"--reverse", "--clean-time", "--keep-old", "--dry-run", "--overwrite",
		"file-mtime", "tombstones may expire too early", "KAFKA-4545",
		"logtool migrate-checkpoints --dry-run testdata/kafka-logs",
		"cp -r testdata/kafka-logs /tmp/kafka-logs && logtool migrate-checkpoints /tmp/kafka-logs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestMigrateParseCleanTime(t *testing.T) {
	for _, tc := range []struct {
		in     string
		source checkpoints.CleanTimeSource
		ms     int64
		bad    bool
	}{
		{"unknown", checkpoints.CleanTimeUnknown, -1, false},
		{"-1", checkpoints.CleanTimeUnknown, -1, false},
		{"file-mtime", checkpoints.CleanTimeFileMtime, 0, false},
		{"0", checkpoints.CleanTimeFixed, 0, false},
		{"1700000000000", checkpoints.CleanTimeFixed, 1700000000000, false},
		{"2024-01-01T00:00:00.5Z", checkpoints.CleanTimeFixed, 1704067200500, false},
		{"-2", 0, 0, true},
		{"1969-12-31T23:59:59Z", 0, 0, true},
		{"File-Mtime", 0, 0, true},
		{"", 0, 0, true},
	} {
		source, ms, err := parseCleanTime(tc.in)
		if tc.bad != (err != nil) || !tc.bad && (source != tc.source || ms != tc.ms) {
			t.Errorf("parseCleanTime(%q) = %v, %d, %v", tc.in, source, ms, err)
		}
	}
}

// TestMigrateUnlisted: a root file with more absent partitions than a
// report lists says how many it left out, in text and JSON, and still
// moves them all into the .migrated file.
func TestMigrateUnlisted(t *testing.T) {
	dir := migrateLogDir(t)
	var b strings.Builder
	const ghosts = 1500
	fmt.Fprintf(&b, "0\n%d\norders 0 700\n", ghosts+1)
	for i := range ghosts {
		fmt.Fprintf(&b, "ghost %d %d\n", i, i)
	}
	root := filepath.Join(dir, "cleaner-offset-checkpoint")
	if err := os.WriteFile(root, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLogtool(t, "--format", "json", "migrate-checkpoints", "--dry-run", dir)
	var last struct {
		Entries, Unlisted int
		Actions           map[string]int
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, errOut)
	}
	if last.Entries != ghosts+1 || last.Unlisted != ghosts+1-1-last.Actions["absent"] || last.Unlisted == 0 {
		t.Errorf("json: %+v", last)
	}
	code, out, _ = runLogtool(t, "migrate-checkpoints", dir)
	want := fmt.Sprintf("... and %d more entries not listed: ", last.Unlisted)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("%d more not listed;", last.Unlisted)) {
		t.Errorf("exit %d, want %q\n%s", code, want, out)
	}
	if got := readFileOr(t, root+".migrated", ""); got != b.String() {
		t.Errorf(".migrated holds %d bytes, want the root file's %d", len(got), b.Len())
	}
}
