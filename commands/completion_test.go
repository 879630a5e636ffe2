package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for logtool, for the completion
// scripts to run.
func TestMain(m *testing.M) {
	if os.Getenv("LOGTOOL_TEST_AS_LOGTOOL") == "1" {
		os.Exit(Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestCompletions(t *testing.T) {
	all := []string{"dump", "find", "grep", "verify", "replicas", "digest", "reindex", "upgrade", "migrate-checkpoints", "compact", "retention", "export", "salvage", "replay", "gen", "completion", "man", "help"}
	for _, tc := range []struct {
		words []string
		want  []string // the candidates' words, in order
		paths string   // the last line: where file names are completed
	}{
		{[]string{""}, all, ""},
		{[]string{"comp"}, []string{"compact", "completion"}, ""},
		// A command name is a command, never a file name: no path here.
		{[]string{"ret"}, []string{"retention"}, ""},
		{[]string{"xyz"}, nil, ""},
		// A global flag before the command does not hide the commands.
		{[]string{"--quiet", "ver"}, []string{"verify"}, ""},
		{[]string{"--workers", "3", "ver"}, []string{"verify"}, ""},
		{[]string{"--format"}, []string{"--format"}, ""},
		{[]string{"--format", ""}, []string{"text", "json"}, ""},
		{[]string{"--format=j"}, []string{"--format=json"}, ""},
		{[]string{"dump", "--format", "=", "j"}, []string{"json"}, ""},
		{[]string{"export", "--format", ""}, []string{"json", "kcat"}, ""},
		{[]string{"compact", "--max"}, []string{"--max-lag", "--max-record-bytes"}, ""},
		{[]string{"compact", "--max-lag", ""}, []string{"unlimited"}, ""},
		{[]string{"retention", "--cleanup-policy", ""}, []string{"delete", "compact", "compact,delete"}, ""},
		{[]string{"gr"}, []string{"grep"}, ""},
		{[]string{"grep", "--key"}, []string{"--key", "--key-hex", "--key-regex", "--key-decoder"}, ""},
		{[]string{"grep", "--value-decoder", "b"}, []string{"base64"}, ""},
		{[]string{"grep", "--max-lag", ""}, []string{"topic"}, ""},
		{[]string{"grep", "--key", "k", ""}, nil, ":files"},
		{[]string{"dump", "--key-decoder", "h"}, []string{"hex"}, ""},
		{[]string{"dump", "--sha"}, []string{"--share-group-state-decoder"}, ""},
		{[]string{"dump", "--rem"}, []string{"--remote-log-metadata-decoder"}, ""},
		{[]string{"dump", "--kafka-version", "3"}, []string{"3.7", "3.8", "3.9"}, ""},
		{[]string{"upgrade", "--compression", "k"}, []string{"keep"}, ""},
		{[]string{"gen", "--compression", "k"}, nil, ""},
		{[]string{"completion", ""}, []string{"bash", "zsh"}, ""},
		{[]string{"help", "re"}, []string{"replicas", "reindex", "retention", "replay"}, ""},
		// Where a path goes, the shell completes file names; where a
		// directory goes, directory names.
		{[]string{"dump", ""}, nil, ":files"},
		{[]string{"dump", "--deep-iteration", "te"}, nil, ":files"},
		{[]string{"dump", "--", "-"}, nil, ":files"},
		{[]string{"find", "--offset", "5", ""}, nil, ":dirs"},
		{[]string{"migrate-checkpoints", "t"}, nil, ":dirs"},
		{[]string{"gen", "--out", ""}, nil, ":dirs"},
		{[]string{"compact", "--topic-config", ""}, nil, ":files"},
		{[]string{"upgrade", "--output", "/t"}, nil, ":dirs"},
		// Nowhere else: numbers, times, commands that take no path.
		{[]string{"gen", "--records", ""}, nil, ""},
		{[]string{"gen", ""}, nil, ""},
		{[]string{"man", ""}, nil, ""},
		{[]string{"compact", "--now", ""}, nil, ""},
		{[]string{"no-such-command", ""}, nil, ""},
		// Hidden commands are not offered.
		{[]string{"__"}, nil, ""},
		{[]string{"__complete", ""}, nil, ""},
	} {
		code, stdout, stderr := runArgs(append([]string{"__complete"}, tc.words...)...)
		var got []string
		paths := ""
		for line := range strings.Lines(stdout) {
			line = strings.TrimSuffix(line, "\n")
			if line == ":files" || line == ":dirs" {
				paths = line
				continue
			}
			word, desc, ok := strings.Cut(line, "\t")
			if !ok || strings.Contains(desc, "\t") || paths != "" {
				t.Errorf("%q: line %q is not word<TAB>description before a path line", tc.words, line)
			}
			got = append(got, word)
		}
		if code != ExitOK || stderr != "" || !slices.Equal(got, tc.want) || paths != tc.paths {
			t.Errorf("%q: exit %d, stderr %q, candidates %q %q, want %q %q", tc.words, code, stderr, got, paths, tc.want, tc.paths)
		}
	}
	// Flags come with their usage, for zsh to show.
	_, stdout, _ := runArgs("__complete", "retention", "--dry")
	if stdout != "--dry-run\treport what would be deleted and change nothing\n" {
		t.Errorf("flag with usage: %q", stdout)
	}
}

// completionShell returns a directory holding a "logtool" that runs this
// test binary as logtool, for PATH.
func completionShell(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nLOGTOOL_TEST_AS_LOGTOOL=1 exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "logtool"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runShell runs shell with args, logtool on the PATH, and returns its
// output. It runs in a directory holding directories named like commands
// ("retention", as in a clone of logtool) and a file "dump.log".
func runShell(t *testing.T, shell, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Dir = t.TempDir()
	for _, d := range []string{"retention", "compact", "rest"} {
		if err := os.Mkdir(filepath.Join(cmd.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cmd.Dir, "dump.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+cmd.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", shell, err, out)
	}
	return string(out)
}

// zshProbe stubs zsh's completion helpers to print what they are given and
// completes a few command lines.
const zshProbe = `
_describe() { print -rl -- "${(@P)${@[-1]}}" }
_files() { print -r -- "<files $*>" }
probe() { print -r -- "--- $*"; words=("$@"); CURRENT=$#words; _logtool || print -r -- "<none>" }
probe logtool --quiet comp
probe logtool ret
probe logtool compact --max
probe logtool --format ''
probe logtool dump ''
probe logtool find ''
probe logtool gen --records ''
`

// TestCompletionZsh loads the zsh script both ways the documentation gives,
// checks that it registers for logtool and that it completes.
func TestCompletionZsh(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed")
	}
	bin := completionShell(t)
	fpath := t.TempDir()
	_, script, _ := runArgs("completion", "zsh")
	if err := os.WriteFile(filepath.Join(fpath, "_logtool"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	const check = `[[ ${_comps[logtool]} == _logtool ]] || { print "not registered: ${_comps[logtool]}"; exit 1 }`
	for name, load := range map[string]string{
		// An autoloaded file is the body of _logtool: its first call must
		// complete, not only define the function.
		"fpath":  "fpath=(" + fpath + " $fpath); autoload -U compinit && compinit -u -D",
		"source": "autoload -U compinit && compinit -u -D; source <(logtool completion zsh)",
	} {
		t.Run(name, func(t *testing.T) {
			out := runShell(t, "zsh", bin, "-f", "-c", load+"\n"+check+"\n"+zshProbe)
			want := "" +
				"--- logtool --quiet comp\n" +
				"compact:one-shot offline log compaction with Kafka's cleaner semantics and the max lag as a hard deadline\n" +
				"completion:print a shell completion script (bash or zsh)\n" +
				"--- logtool ret\n" +
				"retention:delete expired segments by record timestamps, with Kafka's retention rules\n" +
				"--- logtool compact --max\n" +
				"--max-lag:max.compaction.lag.ms: a partition whose oldest dirty record is older is compacted, idle active segment included (default: the topic's configuration, else Kafka's default, unlimited)\n" +
				"--max-record-bytes:refuse a record of a compressed batch larger than this rather than hold it in memory\n" +
				"--- logtool --format \n" +
				"text\njson\n" +
				"--- logtool dump \n" +
				"<files >\n" +
				"--- logtool find \n" +
				"<files -/>\n" +
				"--- logtool gen --records \n" +
				"<none>\n"
			if out != want {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
		})
	}
	// Sourced before compinit, it says what is missing instead of failing
	// with "command not found: compdef".
	out := runShell(t, "zsh", bin, "-f", "-c", "source <(logtool completion zsh)")
	if !strings.Contains(out, "compinit") {
		t.Errorf("without compinit: %q", out)
	}
}

// TestCompletionBash runs the bash script on command lines. compopt is
// stubbed to say when bash would be told that the candidates are file
// names, which makes it end a directory's name with "/": only where a path
// goes, never for a command name that is also a directory here.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	bin := completionShell(t)
	out := runShell(t, "bash", bin, "--norc", "--noprofile", "-c", `
source <(logtool completion bash)
complete -p logtool
compopt() { local IFS=' '; printf 'compopt %s\n' "$*"; }
probe() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); printf -- '--- %s\n' "$*"; _logtool_complete; printf '%s\n' "${COMPREPLY[@]}"; }
probe logtool --quiet comp
probe logtool ret
probe logtool re
probe logtool dump --format = j
probe logtool completion ''
probe logtool dump re
probe logtool dump du
probe logtool find re
probe logtool gen --records ''
probe logtool help ret
`)
	want := "" +
		"complete -F _logtool_complete logtool\n" +
		"--- logtool --quiet comp\ncompact\ncompletion\n" +
		"--- logtool ret\nretention\n" +
		"--- logtool re\nreplicas\nreindex\nretention\nreplay\n" +
		"--- logtool dump --format = j\njson\n" +
		"--- logtool completion \nbash\nzsh\n" +
		"--- logtool dump re\ncompopt -o filenames\nrest\nretention\n" +
		"--- logtool dump du\ncompopt -o filenames\ndump.log\n" +
		"--- logtool find re\ncompopt -o filenames\nrest\nretention\n" +
		"--- logtool gen --records \n\n" +
		"--- logtool help ret\nretention\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// FuzzCompletions: any words, however odd, give candidates that extend the
// word being completed, and no panic.
func FuzzCompletions(f *testing.F) {
	for _, s := range []string{"", "comp", "--quiet\x00ver", "--format=", "dump\x00--format\x00=\x00j", "-\x00-", "--\x00--=", "upgrade\x00--compression\x00"} {
		f.Add(s)
	}
	app := NewApp()
	f.Fuzz(func(t *testing.T, s string) {
		words := strings.Split(s, "\x00")
		cur := words[len(words)-1]
		cands, _ := doc().Completions(app, words)
		for _, c := range cands {
			if !strings.HasPrefix(c.Word, cur) {
				t.Fatalf("%q: candidate %q does not extend %q", words, c.Word, cur)
			}
		}
	})
}
