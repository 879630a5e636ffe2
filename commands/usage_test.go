package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// usageSample copies the shipped sample so that a command which wrongly
// accepts a bad command line cannot write into testdata.
func usageSample(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "kafka-logs")
	if err := os.CopyFS(dst, os.DirFS("../testdata/kafka-logs")); err != nil {
		t.Fatal(err)
	}
	return dst
}

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(append([]string{"logtool"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestUsageErrors holds every command to the contract for user mistakes:
// exit 2 and exactly one line naming the command, with the path or flag and
// without Go's own wording of the failure repeated inside it.
func TestUsageErrors(t *testing.T) {
	s := usageSample(t)
	part := filepath.Join(s, "orders-0")
	seg := filepath.Join(part, "00000000000000000000.log")
	missing := filepath.Join(s, "no-such-dir")
	empty := t.TempDir()
	gen := filepath.Join(t.TempDir(), "gen")

	tests := []struct {
		cmd  string
		args []string
		want string // part of the message
	}{
		// Missing paths and arguments.
		{"dump", nil, "no PATH"},
		{"verify", nil, "no PATH"},
		{"reindex", nil, "no PATH"},
		{"upgrade", nil, "no PATH"},
		{"migrate-checkpoints", nil, "no LOGDIR"},
		{"compact", nil, "no PATH"},
		{"retention", nil, "no PATH"},
		{"find", []string{"--offset", "1"}, "PARTITION_DIR"},
		{"gen", nil, "--out"},
		{"completion", nil, "bash or zsh"},
		{"export", nil, "no PATH"},
		{"grep", []string{"--key", "k"}, "no PATH"},
		{"grep", []string{s}, "no matcher"},
		{"grep", []string{"--count", s}, "or --max-lag alone"},
		{"salvage", nil, "one PARTITION_DIR"},
		{"salvage", []string{part}, "--out DIR is required"},
		{"replay", []string{"--dry-run"}, "no PATH"},
		{"replay", []string{part}, "--bootstrap-server"},

		// Flags after a path, which the parser takes for more paths.
		{"dump", []string{s, "--format", "json"}, "--format after a path: flags go before the paths"},
		{"find", []string{part, "--offset", "5"}, "--offset after a path"},
		{"verify", []string{part, "--deep"}, "--deep after a path"},
		{"compact", []string{part, "--dry-run"}, "--dry-run after a path"},
		{"retention", []string{part, "--dry-run"}, "--dry-run after a path"},
		{"grep", []string{part, "--key", "k"}, "--key after a path"},

		// A path that does not exist.
		{"dump", []string{missing}, missing + ": no such file or directory"},
		{"verify", []string{missing}, missing + ": no such file or directory"},
		{"reindex", []string{missing}, missing},
		{"upgrade", []string{missing}, missing},
		{"migrate-checkpoints", []string{missing}, missing + ": no such file or directory"},
		{"compact", []string{missing}, missing + ": no such file or directory"},
		{"retention", []string{missing}, missing + ": no such file or directory"},
		{"find", []string{"--offset", "1", missing}, missing},
		{"grep", []string{"--key", "k", missing}, missing + ": no such file or directory"},

		// A directory holding nothing of Kafka's.
		{"dump", []string{empty}, empty},
		{"verify", []string{empty}, empty},
		{"reindex", []string{empty}, empty},
		{"upgrade", []string{empty}, empty},
		{"migrate-checkpoints", []string{empty}, empty},
		{"compact", []string{empty}, empty},
		{"retention", []string{empty}, empty},
		{"grep", []string{"--key", "k", empty}, empty},

		// The wrong kind of path.
		{"find", []string{"--offset", "1", s}, "find takes partition directories"},
		{"find", []string{"--offset", "1", seg}, "find takes partition directories"},
		{"reindex", []string{filepath.Join(s, "meta.properties")}, "not a segment file"},
		{"upgrade", []string{seg}, "is a file"},
		{"migrate-checkpoints", []string{part}, "takes log directories"},
		{"compact", []string{seg}, "is a file"},
		{"retention", []string{seg}, "is a file; retention takes partition directories and log directories"},
		{"grep", []string{"--key", "k", filepath.Join(s, "meta.properties")}, "not a segment file"},
		{"completion", []string{"fish"}, `"fish"`},
		{"gen", []string{"--out", gen, "extra"}, `"extra"`},
		{"gen", []string{"--out", seg}, seg + " is not a directory"},

		// Bad flag values.
		{"export", []string{"--isolation", "dirty", s}, "--isolation"},
		{"export", []string{"--encoding", "hex", s}, "--encoding"},
		{"export", []string{"--to-time", "later", s}, "--to-time"},
		{"export", []string{"--from-offset", "9", "--to-offset", "3", s}, "--to-offset 3 is below --from-offset 9"},
		{"export", []string{missing}, missing},
		{"replay", []string{"--dry-run", "--topic-map", "orders", s}, "--topic-map"},
		{"replay", []string{"--dry-run", "--partition", "random", s}, "--partition"},
		{"replay", []string{"--dry-run", "--rate", "fast", s}, "--rate"},
		{"replay", []string{"--bootstrap-server", "h:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "LOGTOOL_NO_SUCH_VAR", s}, "LOGTOOL_NO_SUCH_VAR"},
		{"salvage", []string{seg, "--out", gen}, "salvage takes partition directories"},
		{"dump", []string{"--format", "xml", s}, "--format"},
		{"dump", []string{"--workers", "0", s}, "--workers"},
		{"dump", []string{"--bogus", s}, "bogus"},
		{"dump", []string{"--key-decoder", "rot13", s}, "--key-decoder"},
		{"dump", []string{"--max-bytes", "-1", s}, "--max-bytes"},
		{"dump", []string{"--from-time", "yesterday", s}, "--from-time"},
		{"find", []string{"--offset", "-1", part}, "--offset"},
		{"find", []string{"--timestamp", "noon", part}, "--timestamp"},
		{"verify", []string{"--deep=maybe", s}, "deep"},
		{"reindex", []string{"--interval-bytes", "-5", s}, "--interval-bytes"},
		{"reindex", []string{"--granularity", "-1m", s}, "--granularity"},
		{"upgrade", []string{"--to-magic", "3", s}, "--to-magic"},
		{"upgrade", []string{"--timestamp-type", "wall", s}, "--timestamp-type"},
		{"upgrade", []string{"--compression", "brotli", s}, "--compression"},
		{"migrate-checkpoints", []string{"--clean-time", "soon", s}, "--clean-time"},
		{"compact", []string{"--max-lag", "forever", s}, "--max-lag"},
		{"compact", []string{"--now", "tomorrow", s}, "--now"},
		{"compact", []string{"--topic", "(", s}, "--topic: \"(\": error parsing regexp: missing closing ): `(`"}, // the pattern as typed
		{"retention", []string{"--topic", "a(", s}, "--topic: \"a(\": error parsing regexp"},
		{"compact", []string{"--segment-bytes", "1XB", s}, "--segment-bytes"},
		{"retention", []string{"--retention-ms", "abc", s}, "--retention-ms"},
		{"retention", []string{"--retention-bytes", "1ZB", s}, "--retention-bytes"},
		{"retention", []string{"--now", "x", s}, "--now"},
		{"gen", []string{"--out", gen, "--compression", "brotli"}, "--compression"},
		{"gen", []string{"--out", gen, "--start-time", "xx"}, "--start-time"},
		{"grep", []string{"--key-regex", "(", s}, "--key-regex"},
		{"grep", []string{"--value-regex", "a{2,1}", s}, "--value-regex"},
		{"grep", []string{"--key-hex", "6b6", s}, "--key-hex"},
		{"grep", []string{"--header", "=v", s}, "--header"},
		{"grep", []string{"--key", "k", "--key-decoder", "rot13", s}, "--key-decoder"},
		{"grep", []string{"--key", "k", "--width", "-1", s}, "--width"},
		{"grep", []string{"--key", "k", "--max-lag", "soon", s}, "--max-lag"},
		{"grep", []string{"--key", "k", "--max-lag", "0", s}, "--max-lag"},
		{"grep", []string{"--key", "k", "--max-lag", "1h", "--now", "noon", s}, "--now"},
		{"grep", []string{"--key", "k", "--max-lag", "1h", "--delete-retention", "x", s}, "--delete-retention"},
		{"grep", []string{"--key", "k", "--offset-map-memory", "lots", s}, "--offset-map-memory"},
		{"grep", []string{"--key", "k", "--topic", "(", s}, "--topic"},
		{"grep", []string{"--key", "k", "--from-time", "x", s}, "--from-time"},

		// Contradictory flags.
		{"dump", []string{"--index-sanity-check", "--verify-index-only", s}, "exclude each other"},
		{"dump", []string{"--from-offset", "10", "--to-offset", "5", part}, "--to-offset"},
		{"find", []string{"--offset", "1", "--timestamp", "1", part}, "exactly one"},
		{"reindex", []string{"--check", "--dry-run", s}, "--dry-run"},
		{"reindex", []string{"--strict", s}, "--strict"},
		{"upgrade", []string{"--append-time", "5", s}, "--append-time"},
		{"upgrade", []string{"--compression", "zstd", s}, "--to-magic 2"},
		{"migrate-checkpoints", []string{"--reverse", "--clean-time", "5", s}, "--reverse"},
		{"gen", []string{"--out", gen, "--magic", "1", "--compression", "zstd"}, "zstd"},
		{"grep", []string{"--key", "k", "--now", "1", s}, "--now is for the audit"},
		{"grep", []string{"--key", "k", "--from-offset", "9", "--to-offset", "3", s}, "--to-offset 3 is below --from-offset 9"},
		{"grep", []string{"--max-lag", "1h", "--to-offset", "3", s}, "give a matcher to search a range"},

		// Values a library refuses, named by their flags.
		{"compact", []string{"--offset-map-memory", "12", s}, "--offset-map-memory: 12 bytes are too few"},
		{"gen", []string{"--out", gen, "--magic", "5"}, "--magic: want 0, 1 or 2"},
		{"gen", []string{"--out", gen, "--abort-ratio", "2"}, "--abort-ratio: want a value in [0, 1]"},
		{"replay", []string{"--bootstrap-server", "h:1", "--tls-cert", "c.pem", s}, "--tls-cert:"},
		{"replay", []string{"--bootstrap-server", "h:1", "--sasl-mechanism", "GSSAPI", "--sasl-user", "u", "--sasl-password-env", "HOME", s}, "--sasl-mechanism: want PLAIN"},
	}
	for _, tc := range tests {
		args := append([]string{tc.cmd}, tc.args...)
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := runArgs(args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, stderr)
			}
			checkOneLine(t, tc.cmd, stderr)
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(gen); err == nil {
		t.Errorf("a rejected gen command line wrote %s", gen)
	}
}

// checkOneLine fails unless stderr is the single error line of the contract.
func checkOneLine(t *testing.T, cmd, stderr string) {
	t.Helper()
	line, rest, _ := strings.Cut(stderr, "\n")
	if rest != "" {
		t.Errorf("want one line on stderr, got %q", stderr)
	}
	if prefix := "logtool: " + cmd + ": "; !strings.HasPrefix(line, prefix) {
		t.Errorf("stderr %q does not start with %q", line, prefix)
	}
	// Go's own wording ("stat X: ...", "open X: ...") repeats the path the
	// line already names, and a panic or stack trace is never for users.
	for _, soup := range []string{"stat ", "open ", "lstat ", "panic", "goroutine", ".go:"} {
		if strings.Contains(line, soup) {
			t.Errorf("stderr %q contains %q", line, soup)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	code, _, stderr := runArgs("inspect")
	if code != ExitUsage || stderr != "logtool: unknown command \"inspect\" (see logtool --help)\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestQuiet runs every command once on a healthy copy of the sample with
// --quiet: nothing may reach stderr.
func TestQuiet(t *testing.T) {
	s := usageSample(t)
	const now = "2024-02-01T00:00:00Z"
	runs := [][]string{
		{"dump", s},
		{"dump", "--deep-iteration", "--print-data-log", filepath.Join(s, "payments.txn-0")},
		{"dump", "--verify-index-only", filepath.Join(s, "orders-0")},
		{"dump", "--summary", filepath.Join(s, "orders-0", "00000000000000000000.log"), filepath.Join(s, "clicks-v1-0", "00000000000000000000.log")},
		{"find", "--offset", "700", filepath.Join(s, "orders-0")},
		{"find", "--timestamp", "2024-01-01T00:05:00Z", filepath.Join(s, "clicks-v1-0")},
		{"verify", "--deep", s},
		{"reindex", "--check", s},
		{"reindex", "--dry-run", s},
		{"reindex", s},
		{"upgrade", "--dry-run", s},
		{"upgrade", filepath.Join(s, "legacy.events-v0-0")},
		{"migrate-checkpoints", "--dry-run", s},
		{"migrate-checkpoints", s},
		{"migrate-checkpoints", "--reverse", s},
		{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "1h", "--now", now, s},
		{"compact", "--kafka-defaults", "--max-lag", "1h", "--now", now, filepath.Join(s, "user-profiles-0")},
		{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "1h", "--now", now, s},
		{"retention", "--kafka-defaults", "--retention-ms", "1h", "--now", now, filepath.Join(s, "orders-1")},
		{"grep", "--key", "key-000007", s},
		{"grep", "--count", "--kafka-defaults", "--max-lag", "60d", "--now", now, s},
		{"gen", "--out", "", "--records", "50"}, // a new directory each run: gen refuses to write a partition twice
		{"completion", "bash"},
		{"completion", "zsh"},
		{"man"},
	}
	for _, args := range runs {
		// --quiet before the command name and after it.
		before := append([]string{"--quiet"}, args...)
		after := append([]string{args[0], "--quiet"}, args[1:]...)
		for _, args := range [][]string{before, after} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				if i := slices.Index(args, "--out"); i >= 0 {
					args = slices.Clone(args)
					args[i+1] = filepath.Join(t.TempDir(), "gen")
				}
				code, _, stderr := runArgs(args...)
				if code != ExitOK || stderr != "" {
					t.Errorf("exit %d, stderr %q", code, stderr)
				}
			})
		}
	}
}

// TestHelpGroups checks that logtool --help lists every command under its
// group, and that every command's help gives examples on the shipped sample.
func TestHelpGroups(t *testing.T) {
	groups := map[string][]string{
		"inspect":            {"dump", "find", "grep", "verify", "replicas", "digest"},
		"repair and convert": {"reindex", "upgrade", "migrate-checkpoints", "compact", "retention"},
		"tools":              {"gen", "completion", "man", "help"},
		"rescue":             {"export", "salvage", "replay"},
	}
	for _, cmd := range NewApp().Commands {
		want := ""
		for g, names := range groups {
			for _, n := range names {
				if n == cmd.Name {
					want = g
				}
			}
		}
		if cmd.Category != want {
			t.Errorf("%s: category %q, want %q", cmd.Name, cmd.Category, want)
		}
		code, stdout, _ := runArgs(cmd.Name, "--help")
		if code != ExitOK {
			t.Errorf("%s --help: exit %d", cmd.Name, code)
		}
		if cmd.Hidden || cmd.Category == "tools" {
			continue
		}
		if n := strings.Count(stdout, "testdata/kafka-logs"); n < 2 {
			t.Errorf("%s --help: %d examples on testdata/kafka-logs, want at least 2", cmd.Name, n)
		}
	}
	code, stdout, _ := runArgs("--help")
	if code != ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for g := range groups {
		if !strings.Contains(stdout, "   "+g+":\n") {
			t.Errorf("--help has no group %q", g)
		}
	}
}

func TestCompletionAndManArguments(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "bash", "zsh"}, {"completion", "fish"}, {"man", "extra"}} {
		code, _, stderr := runArgs(args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		checkOneLine(t, args[0], stderr)
	}
}

// TestFlagErrorsAsTyped: the flag package names every flag with one dash;
// the user typed two (or one), and the line says it their way.
func TestFlagErrorsAsTyped(t *testing.T) {
	s := usageSample(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--bogus", s}, "flag provided but not defined: --bogus (see logtool verify --help)"},
		{[]string{"dump", "--workers", "x", s}, `invalid value "x" for flag --workers: parse error (see logtool dump --help)`},
		{[]string{"dump", "--workers=x", s}, `for flag --workers:`},
		{[]string{"dump", "-workers", "x", s}, `for flag -workers:`},
		// A global flag before the command is the app's to parse.
		{[]string{"--workers", "x", "dump", s}, `invalid value "x" for flag --workers: parse error (see logtool --help)`},
		{[]string{"--bogus", "dump", s}, "flag provided but not defined: --bogus (see logtool --help)"},
	} {
		code, _, stderr := runArgs(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestNoCommand: logtool alone is a usage error, as the README says of
// missing arguments; the help goes to stderr, nothing to stdout.
func TestNoCommand(t *testing.T) {
	code, stdout, stderr := runArgs()
	if code != ExitUsage || stdout != "" || !strings.HasSuffix(stderr, "logtool: no command given\n") || !strings.Contains(stderr, "COMMANDS:") {
		t.Errorf("exit %d, stdout %q, stderr tail %q", code, stdout, stderr[max(0, len(stderr)-80):])
	}
	if code, stdout, _ := runArgs("--help"); code != ExitOK || !strings.Contains(stdout, "COMMANDS:") {
		t.Errorf("--help: exit %d", code)
	}
}

// TestBareMillisWarned: --max-lag 7 is 7 ms in Kafka's unit, which is
// rarely what was meant; a number under a second without a unit is warned
// about, one with a unit or over a second is not.
func TestBareMillisWarned(t *testing.T) {
	s := usageSample(t)
	const warning = "logtool: warning: --max-lag 7 is 7 ms"
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"grep", "--max-lag", "7", "--now", "2024-01-02T12:00:00Z", s}, true},
		{[]string{"compact", "--dry-run", "--max-lag", "7", s}, true},
		{[]string{"compact", "--dry-run", "--max-lag", "7s", s}, false},
		{[]string{"compact", "--dry-run", "--max-lag", "7000", s}, false},
		{[]string{"--quiet", "compact", "--dry-run", "--max-lag", "7", s}, false},
	} {
		_, _, stderr := runArgs(tc.args...)
		if got := strings.Contains(stderr, warning); got != tc.warn {
			t.Errorf("%q: warned %v, want %v; stderr %q", tc.args, got, tc.warn, stderr)
		}
	}
}
