package commands

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestHelpCommand(t *testing.T) {
	_, appHelp, _ := runArgs("--help")
	for _, tc := range []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"help"}, ExitOK, appHelp, ""},
		{[]string{"help", "nosuch"}, ExitUsage, "", `logtool: help: unknown command "nosuch" (commands: dump, find, grep, verify,`},
		{[]string{"help", "__complete"}, ExitUsage, "", `logtool: help: unknown command "__complete"`},
		{[]string{"help", "dump", "verify"}, ExitUsage, "", "logtool: help: want at most one COMMAND, got 2 arguments"},
	} {
		code, out, errOut := runArgs(tc.args...)
		if code != tc.code || out != tc.out || !strings.HasPrefix(errOut, tc.err) || tc.err == "" && errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
	// help COMMAND is COMMAND --help, for every command, and each has
	// examples and a synopsis that reads like a manual page's.
	synopsis := regexp.MustCompile(`(?m)^USAGE:\n   logtool \S+( \[--[a-z-]+( [^\]]+)?\])*`)
	for _, name := range commandNames(NewApp()) {
		_, want, _ := runArgs(name, "--help")
		code, got, errOut := runArgs("help", name)
		if name == "help" { // urfave/cli answers "help --help" with the app's help
			want = got
		}
		if code != ExitOK || errOut != "" || got != want {
			t.Errorf("help %s: exit %d, stderr %q, stdout differs from %s --help:\n%s", name, code, errOut, name, got)
		}
		if !regexp.MustCompile(`Examples:\n +(logtool|source <\(logtool) `).MatchString(got) {
			t.Errorf("%s --help has no examples:\n%s", name, got)
		}
		if !synopsis.MatchString(got) || strings.Contains(got, "[command options]") || strings.Contains(got, "=[value]") {
			t.Errorf("%s --help: usage line:\n%s", name, got)
		}
	}
	_, got, _ := runArgs("dump", "--help")
	for _, want := range []string{
		"   logtool dump [--deep-iteration] [--print-data-log] [--key-decoder DECODER] [--value-decoder DECODER]\n                [--key-decoder-class CLASS]",
		"   --max-lag", // not dump's: a check that the test sees a bad line
	} {
		if strings.Contains(got, want) != (want[3] != '-') {
			t.Errorf("dump --help, %q:\n%s", want, got)
		}
	}
	_, got, _ = runArgs("migrate-checkpoints", "--help")
	if !strings.Contains(got, "Stock Kafka reads only the per-disk file") || !strings.Contains(got, "--reverse is the way back") {
		t.Errorf("migrate-checkpoints --help does not say what reads which file:\n%s", got)
	}
	_, got, _ = runArgs("dump", "--help")
	// Switches do not say "(default: false)"; values say their default bare.
	if strings.Contains(got, "(default: false)") || !strings.Contains(got, "--key-decoder DECODER") || !strings.Contains(got, "(default: string)") {
		t.Errorf("dump --help flags:\n%s", got)
	}
}

// TestManPage: the page has the sections of a manual page, in order, its
// synopsis reads like one, and it renders without warnings.
func TestManPage(t *testing.T) {
	code, page, errOut := runArgs("man")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	at := 0
	for _, sec := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "EXAMPLES", "FILES", "SEE ALSO"} {
		i := strings.Index(page[at:], "\n.SH "+sec+"\n")
		if i < 0 {
			t.Fatalf("no section %s after byte %d", sec, at)
		}
		at += i + 1
	}
	for _, name := range commandNames(NewApp()) {
		if !strings.Contains(page, "\n.SY \"logtool "+name+"\"\n") || !strings.Contains(page, "\n.SS "+strings.ReplaceAll(name, "-", `\-`)+"\n") {
			t.Errorf("no synopsis or section for %s", name)
		}
	}
	for _, want := range []string{`\fB\-\-max\-lag\fR\ \fIDURATION\fR`, `[\fB\-\-deep\-iteration\fR]`, `[\fB\-\-kafka\-version\fR\ \fIX.Y\fR]`, `[\fB\-\-share\-group\-state\-decoder\fR]`, `[\fB\-\-remote\-log\-metadata\-decoder\fR]`, "\n.B 3\nA check found problems",
		`logtool dump \-\-deep\-iteration \-\-print\-data\-log testdata/kafka\-logs/`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "=[value]") {
		t.Error("urfave/cli's synopsis")
	}

	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the page is not rendered")
	}
	cmd := exec.Command(groff, "-man", "-ww", "-Tutf8", "-rLL=110n")
	cmd.Stdin = strings.NewReader(page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, stderr.String())
	}
	text := regexp.MustCompile("\x1b\\[[0-9;]*m|.\x08").ReplaceAllString(string(out), "")
	for _, want := range []string{
		"logtool dump [--deep-iteration] [--print-data-log] [--key-decoder DECODER]",
		"logtool gen --out DIR [--topics N]",
		"logtool help [COMMAND]",
		"EXIT STATUS",
		"logtool compact --dry-run --max-lag 7d testdata/kafka-logs",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, text)
		}
	}
}

// TestHelpSaysItOnce: urfave/cli's help adds "(repeatable)" to list flags
// itself, and every example a flag's help gives must be a value it takes.
func TestHelpSaysItOnce(t *testing.T) {
	for _, cmd := range NewApp().Commands {
		_, out, _ := runArgs(cmd.Name, "--help")
		if strings.Contains(out, "(repeatable) (repeatable)") {
			t.Errorf("%s --help says (repeatable) twice", cmd.Name)
		}
	}
	_, out, _ := runArgs("replay", "--help")
	m := regexp.MustCompile(`\n\s+--rate VALUE\s.*\((.*)\)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("replay --help gives no --rate examples")
	}
	list := m[1]
	for _, ex := range strings.Split(list, ", ") {
		if _, err := sizeArg("rate", ex, 1, noMax); err != nil {
			t.Errorf("replay --help gives --rate %s, which it refuses: %v", ex, err)
		}
	}
}
