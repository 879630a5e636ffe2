package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func manCommand() *cli.Command {
	return &cli.Command{
		Name:        "man",
		Category:    "tools",
		Usage:       "print the manual page (roff)",
		Description: description("man"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("unexpected argument %q", c.Args().First())
			}
			_, err := fmt.Fprint(c.App.Writer, manPage(c.App))
			return err
		},
	}
}

// manFiles are the files of a log directory, for the FILES section.
var manFiles = []struct{ path, what string }{
	{"LOGDIR/meta.properties", "the broker's or node's identity (cluster.id, node.id or broker.id)"},
	{"LOGDIR/.lock", "held (fcntl) by a running broker; writers refuse a log directory whose lock is held (exit 4)"},
	{"LOGDIR/recovery-point-offset-checkpoint, LOGDIR/replication-offset-checkpoint, LOGDIR/log-start-offset-checkpoint",
		"per-disk offset checkpoints; retention updates the log start and recovery points"},
	{"LOGDIR/cleaner-offset-checkpoint", "the log cleaner's first dirty offsets; compact updates it"},
	{"LOGDIR/cleaner-offset-checkpoint.migrated", "the root file after migrate-checkpoints moved its entries to the partitions"},
	{"LOGDIR/TOPIC-PARTITION/BASE.log, .index, .timeindex, .txnindex", "a segment and its offset, time and transaction indexes"},
	{"LOGDIR/TOPIC-PARTITION/BASE.snapshot", "producer state snapshot"},
	{"LOGDIR/TOPIC-PARTITION/leader-epoch-checkpoint, partition.metadata", "leader epochs; the topic id"},
	{"LOGDIR/TOPIC-PARTITION/cleaner-checkpoint", "logtool's per-partition cleaner checkpoint: first dirty offset and last clean time"},
	{"*.cleaned, *.swap, *.deleted", "left by an interrupted cleaning, segment swap or deletion; a broker finishes or undoes them at startup, and so does logtool"},
	{"LOGDIR/__cluster_metadata-0", "the KRaft metadata log, with its snapshots OFFSET-EPOCH.checkpoint and quorum-state: each topic's ID and configuration, which compact, retention, grep --max-lag and dump read and verify checks partitions against"},
}

// manPage renders the manual page of app in roff (man macros).
func manPage(app *cli.App) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p(`.TH LOGTOOL 1 "" "logtool %s" "User Commands"`, roffText(app.Version))
	p(".nh") // hyphenated words are not to be split further
	p(".ad l")
	p(".SH NAME")
	p(`logtool \- %s`, roffText(app.Usage))

	p(".SH SYNOPSIS")
	p(".SY logtool")
	p(`[\fIGLOBAL FLAGS\fR] \fICOMMAND\fR [\fIFLAGS\fR] \fIPATH\fR...`)
	p(".YS")
	for _, cmd := range app.VisibleCommands() {
		p(".SY %q", "logtool "+cmd.Name)
		for _, w := range synopsisWords(cmd) {
			p("%s", roffWord(w))
		}
		p(".YS")
	}

	p(".SH DESCRIPTION")
	paragraphs(&b, appDescription)
	p(".SS Global flags")
	p("They may be given before or after the command name.")
	flagList(&b, app.VisibleFlags())

	p(".SH COMMANDS")
	var examples []string
	for _, cmd := range app.VisibleCommands() {
		desc, ex := splitExamples(cmd.Description)
		if len(examples) > 0 && len(ex) > 0 {
			examples = append(examples, "")
		}
		examples = append(examples, ex...)
		p(".SS %s", roffText(cmd.Name))
		p("%s.", roffText(strings.ToUpper(cmd.Usage[:1])+strings.TrimSuffix(cmd.Usage[1:], ".")))
		paragraphs(&b, desc)
		flagList(&b, commandFlags(cmd))
	}

	p(".SH EXIT STATUS")
	for _, e := range exitStatus {
		p(".TP\n.B %d\n%s", e.code, roffText(e.meaning))
	}

	p(".SH EXAMPLES")
	p(".nf")
	p(".RS")
	for _, e := range examples {
		p("%s", roffText(e))
	}
	p(".RE")
	p(".fi")

	p(".SH FILES")
	for _, f := range manFiles {
		p(".TP\n.I %s\n%s", roffText(f.path), roffText(f.what))
	}

	p(".SH SEE ALSO")
	p("kafka\\-dump\\-log.sh, kafka\\-log\\-dirs.sh, kafka\\-configs.sh and kafka\\-metadata\\-shell.sh in Apache Kafka's bin directory;")
	p("the Kafka documentation, https://kafka.apache.org/documentation/;")
	p("docs/commands/ and docs/format/ in logtool's source, one page per command and per file format.")
	return b.String()
}

// splitExamples cuts a description at its "Examples:" block and returns
// the rest and the example lines.
func splitExamples(desc string) (string, []string) {
	i := strings.Index(desc, "Examples:\n")
	if i < 0 {
		return desc, nil
	}
	var ex []string
	for _, l := range strings.Split(desc[i+len("Examples:\n"):], "\n") {
		ex = append(ex, strings.TrimPrefix(l, "  "))
	}
	return strings.TrimSpace(desc[:i]), ex
}

// paragraphs writes text, whose paragraphs are separated by blank lines.
// Indented lines are a table or list laid out by hand: kept as they are.
func paragraphs(b *strings.Builder, text string) {
	for _, para := range strings.Split(text, "\n\n") {
		if strings.TrimSpace(para) == "" {
			continue
		}
		b.WriteString(".PP\n")
		nf := false
		for _, l := range strings.Split(para, "\n") {
			if indented := strings.HasPrefix(l, " "); indented != nf {
				nf = indented
				b.WriteString(map[bool]string{true: ".nf\n", false: ".fi\n"}[nf])
			}
			b.WriteString(roffText(l) + "\n")
		}
		if nf {
			b.WriteString(".fi\n")
		}
	}
}

func flagList(b *strings.Builder, flags []cli.Flag) {
	for _, f := range flags {
		s := flagString(f)
		names, usage, _ := strings.Cut(s, "\t")
		b.WriteString(".TP\n" + roffWord(names) + "\n" + roffText(usage) + "\n")
	}
}

// roffText escapes text for roff: backslashes, hyphens (which would print
// as typographic hyphens and break commands pasted from the page) and a
// leading dot or quote, which would make a control line.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffWord sets a word of a synopsis or a flag's names in the fonts of a
// manual page: flags bold, placeholders (upper case) italic, brackets,
// commas and ellipses roman.
func roffWord(w string) string {
	var out []string
	for _, tok := range strings.Split(w, " ") {
		lead := strings.TrimLeft(tok, "[(")
		pre := tok[:len(tok)-len(lead)]
		core := strings.TrimRight(lead, "]),.")
		post := lead[len(core):]
		if strings.HasSuffix(core, "..") { // "PATH..." keeps its dots roman
			core = strings.TrimRight(core, ".")
			post = lead[len(core):]
		}
		switch {
		case strings.HasPrefix(core, "-"):
			core = `\fB` + roffText(core) + `\fR`
		case strings.ToUpper(core) == core && strings.ContainsAny(core, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
			core = `\fI` + roffText(core) + `\fR`
		default:
			core = roffText(core)
		}
		out = append(out, pre+core+post)
	}
	// Unpaddable spaces keep "[--to-offset OFFSET]" on one line.
	return strings.Join(out, `\ `)
}
