// Package clidoc renders what logtool says about itself from the
// urfave/cli app alone: the usage lines of --help, the manual page and the
// shell completions, so that none of them can drift from the flags the
// commands really take, and --version from the build's record. What the
// app cannot tell (placeholders, exit codes, files, the values a flag
// takes) is given in a Doc.
package clidoc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Doc is what the renderers need beyond the app.
type Doc struct {
	// Metavars are the placeholders of flags by name ("max-lag":
	// "DURATION"), for flags whose usage does not backquote one.
	Metavars map[string]string
	// Global are the global flags, which NewApp appends to every command
	// and the manual page lists once.
	Global []cli.Flag
	// Description is the app's description, the manual page's first part.
	Description string
	ExitStatus  []Entry
	Files       []Entry
	// Values lists the words flag takes in command cmd, for completion;
	// nil for a flag that takes a number, a time or a path.
	Values func(cmd, flag string) []string
	// UsageErr makes the error of a bad argument (the app's exit 2).
	UsageErr func(format string, args ...any) error
}

// Entry is an item of a manual page list: an exit code or a file.
type Entry struct{ Term, Text string }

// metavar returns the placeholder of flag f, "" for a flag that takes no
// value.
func (d *Doc) metavar(f cli.Flag) string {
	g, ok := f.(cli.DocGenerationFlag)
	if !ok || !g.TakesValue() {
		return ""
	}
	if name, _ := unquoteUsage(g.GetUsage()); name != "" {
		return name
	}
	if m, ok := d.Metavars[f.Names()[0]]; ok {
		return m
	}
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "N"
	}
	return "VALUE"
}

// unquoteUsage returns the backquoted placeholder of a usage and the
// usage without the backquotes, as urfave/cli reads them.
func unquoteUsage(usage string) (name, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	name = usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+2+j:]
}

// isPathMetavar tells whether a flag with placeholder m takes a path, for
// the shells to complete file names there.
func isPathMetavar(m string) bool { return m == "DIR" || m == "FILE" || m == "FILE,..." }

// FlagString is cli.FlagStringer: "--max-lag DURATION<TAB>usage (default:
// unlimited)", without urfave/cli's "(default: false)" on every switch or
// quotes around string defaults.
func (d *Doc) FlagString(f cli.Flag) string {
	g, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	var names []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	s := strings.Join(names, ", ")
	if m := d.metavar(f); m != "" {
		s += " " + m
	}
	_, usage := unquoteUsage(g.GetUsage())
	if def := flagDefault(f); def != "" {
		usage += " (default: " + def + ")"
	}
	if _, ok := f.(*cli.StringSliceFlag); ok {
		usage += " (repeatable)"
	}
	return s + "\t" + usage
}

// flagDefault is the default worth showing: none for switches (off) and
// empty values.
func flagDefault(f cli.Flag) string {
	d := f.(cli.DocGenerationFlag)
	if !d.TakesValue() {
		return ""
	}
	switch f := f.(type) {
	case *cli.StringFlag:
		if f.DefaultText != "" {
			return f.DefaultText
		}
		return f.Value
	case *cli.GenericFlag, *cli.StringSliceFlag:
		return ""
	}
	return d.GetDefaultText()
}

// commandFlags are a command's own flags, without the global ones NewApp
// appends to every command.
func (d *Doc) commandFlags(cmd *cli.Command) []cli.Flag {
	// A flag named as a global one but with a usage of its own (export's
	// --format) is the command's.
	global := map[string]string{}
	for _, f := range d.Global {
		global[f.Names()[0]] = f.(cli.DocGenerationFlag).GetUsage()
	}
	var out []cli.Flag
	for _, f := range cmd.Flags {
		usage, isGlobal := global[f.Names()[0]]
		if (!isGlobal || usage != f.(cli.DocGenerationFlag).GetUsage()) && f.Names()[0] != "help" {
			out = append(out, f)
		}
	}
	return out
}

// synopsisWords are the words of a command's usage line after its name,
// as a manual page writes them: "[--key-decoder DECODER]", ..., "PATH...".
// Flags the arguments name ("--out DIR") are not repeated.
func (d *Doc) synopsisWords(cmd *cli.Command) []string {
	var words []string
	for _, f := range d.commandFlags(cmd) {
		name := f.Names()[0]
		if strings.Contains(cmd.ArgsUsage+" ", "--"+name+" ") {
			continue
		}
		w := "--" + name
		if m := d.metavar(f); m != "" {
			w += " " + m
		}
		words = append(words, "["+w+"]")
	}
	// Required flags ("--out FILE") come first, paths last, as the
	// command line takes them: no flag after a path.
	args := strings.Fields(cmd.ArgsUsage)
	i := 0
	for i+1 < len(args) && strings.HasPrefix(args[i], "--") {
		i += 2
	}
	if i > 0 {
		words = append([]string{strings.Join(args[:i], " ")}, words...)
	}
	if i < len(args) {
		words = append(words, strings.Join(args[i:], " "))
	}
	return words
}

// Synopsis is a command's usage line wrapped at width, continuation lines
// aligned under the first flag:
//
//	logtool dump [--deep-iteration] [--key-decoder DECODER]
//	             [--summary] PATH...
func (d *Doc) Synopsis(cmd *cli.Command, width int) []string {
	head := "logtool " + cmd.Name
	var lines []string
	line := head
	for _, w := range d.synopsisWords(cmd) {
		if len(line)+1+len(w) > width && len(line) > len(head) {
			lines = append(lines, line)
			line = strings.Repeat(" ", len(head))
		}
		line += " " + w
	}
	return append(lines, line)
}

// ManPage renders the manual page of app in roff (man macros).
func (d *Doc) ManPage(app *cli.App) string {
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
		for _, w := range d.synopsisWords(cmd) {
			p("%s", roffWord(w))
		}
		p(".YS")
	}

	p(".SH DESCRIPTION")
	paragraphs(&b, d.Description)
	p(".SS Global flags")
	p("They may be given before or after the command name.")
	d.flagList(&b, app.VisibleFlags())

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
		d.flagList(&b, d.commandFlags(cmd))
	}

	p(".SH EXIT STATUS")
	for _, e := range d.ExitStatus {
		p(".TP\n.B %s\n%s", e.Term, roffText(e.Text))
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
	for _, f := range d.Files {
		p(".TP\n.I %s\n%s", roffText(f.Term), roffText(f.Text))
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

func (d *Doc) flagList(b *strings.Builder, flags []cli.Flag) {
	for _, f := range flags {
		s := d.FlagString(f)
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

// The shells ask logtool itself for candidates: the scripts pass the words
// typed so far to the hidden command __complete, which knows the commands,
// their flags and the values of a few of them from the app itself, so the
// scripts never go stale. It also says where a path goes (a last line
// ":files" or ":dirs"): only there do the scripts complete file names, and
// only there does bash treat candidates as file names, which would end a
// command name with "/" wherever a directory has its name ("logtool ret" in
// a clone of logtool, which has retention/). urfave/cli's own
// --generate-bash-completion is not used: it takes the word before the cursor
// for the one being completed, so "logtool --quiet <TAB>" offered nothing,
// and it offers a "help" command where a path is expected.

const Bash = `# bash completion for logtool; load with: source <(logtool completion bash)
_logtool_complete() {
  local IFS=$'\n' cur="${COMP_WORDS[COMP_CWORD]}" line paths=
  local -a words
  COMPREPLY=()
  while IFS= read -r line; do
    case $line in
      :files) paths=-f ;;
      :dirs) paths=-d ;;
      *) words+=("${line%%$'\t'*}") ;;
    esac
  done < <("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [[ ${#words[@]} -gt 0 ]]; then
    COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
  elif [[ -n $paths ]]; then
    compopt -o filenames
    COMPREPLY=($(compgen $paths -- "$cur"))
  fi
}
complete -F _logtool_complete logtool
`

// The same file works when sourced and when installed as _logtool in a
// directory of $fpath, where compinit autoloads its text as the body of
// _logtool: that first call defines the function and must then complete.
const Zsh = `#compdef logtool
# zsh completion for logtool. Install: logtool completion zsh > "${fpath[1]}/_logtool"
# or load into a running shell (after compinit): source <(logtool completion zsh)
_logtool() {
  local line word desc paths
  local -a candidates
  for line in "${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
    case $line in
      ('') ;;
      (:files|:dirs) paths=$line ;;
      (*) word=${${line%%$'\t'*}//:/\\:} desc=${line#*$'\t'}
          candidates+=("$word${desc:+:$desc}") ;;
    esac
  done
  if (( ${#candidates} )); then
    _describe -t logtool-values 'logtool' candidates
  elif [[ $paths == :files ]]; then
    _files
  elif [[ $paths == :dirs ]]; then
    _files -/
  else
    return 1
  fi
}
if [[ ${funcstack[1]} == _logtool ]]; then
  _logtool "$@"
elif (( ${+functions[compdef]} )); then
  compdef _logtool logtool
else
  print -u2 "logtool completion needs zsh's completion system first: autoload -U compinit && compinit"
fi
`

// Completion is a candidate word and what it is.
type Completion struct{ Word, Desc string }

// Completions returns the candidates for the last of words, and ":files"
// or ":dirs" when a path goes there.
func (d *Doc) Completions(app *cli.App, words []string) (out []Completion, paths string) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var cmd *cli.Command
	flags := app.Flags
	var pending cli.Flag // a flag waiting for its value
	positional := false  // after "--"
	for _, w := range words[:len(words)-1] {
		switch {
		case pending != nil && w == "=":
			// bash splits "--format=json" at the "=".
		case pending != nil:
			pending = nil
		case positional:
		case w == "--":
			positional = true
		case len(w) > 1 && w[0] == '-':
			name, _, inline := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if f := findFlag(flags, name); f != nil && takesValue(f) && !inline {
				pending = f
			}
		case cmd == nil:
			if cmd = app.Command(w); cmd == nil || cmd.Hidden {
				return nil, ""
			}
			flags = cmd.Flags
		}
	}
	add := func(word, desc string) {
		if strings.HasPrefix(word, cur) {
			out = append(out, Completion{word, desc})
		}
	}
	cmdName := ""
	if cmd != nil {
		cmdName = cmd.Name
	}
	switch {
	case pending != nil:
		for _, v := range d.Values(cmdName, pending.Names()[0]) {
			add(v, "")
		}
		if m := d.metavar(pending); isPathMetavar(m) {
			return out, pathKind(m)
		}
	case !positional && len(cur) > 0 && cur[0] == '-':
		if name, _, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			// zsh keeps "--format=js" one word.
			prefix := cur[:strings.IndexByte(cur, '=')+1]
			if f := findFlag(flags, name); f != nil {
				for _, v := range d.Values(cmdName, name) {
					add(prefix+v, "")
				}
			}
			break
		}
		for _, f := range flags {
			usage := ""
			if g, ok := f.(cli.DocGenerationFlag); ok {
				_, usage = unquoteUsage(g.GetUsage())
			}
			for _, n := range f.Names() {
				dashes := "--"
				if len(n) == 1 {
					dashes = "-"
				}
				add(dashes+n, usage)
			}
		}
	case cmd == nil, cmd.Name == "help":
		for _, c := range app.VisibleCommands() {
			add(c.Name, c.Usage)
		}
	case cmd.Name == "completion":
		add("bash", "")
		add("zsh", "")
	case cmd.ArgsUsage != "" && !strings.HasPrefix(cmd.ArgsUsage, "--"):
		// PATH..., PARTITION_DIR, LOGDIR...
		return nil, pathKind(cmd.ArgsUsage)
	}
	return out, ""
}

// pathKind is ":dirs" for a placeholder naming a directory, else ":files".
func pathKind(placeholder string) string {
	if strings.Contains(placeholder, "DIR") {
		return ":dirs"
	}
	return ":files"
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	g, ok := f.(cli.DocGenerationFlag)
	return ok && g.TakesValue()
}
