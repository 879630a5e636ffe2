package commands

import (
	"embed"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// The long help of each command is prose, kept in help/NAME.txt where it
// reads and diffs as text; the manual page and --help both show it.
//
//go:embed help/*.txt
var helpFiles embed.FS

// description is the long help of the command whose file is help/name.txt.
// Every command's help is rendered by the tests, so a missing file cannot
// reach a user.
func description(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// What a flag's value looks like, in --help, the synopsis and the manual
// page: "--max-lag DURATION". A backquoted word in a flag's usage names it
// (urfave/cli's convention, for a name that means different things in
// different commands); else this table does; else the flag's type.
var metavars = map[string]string{
	"format": "text|json", "workers": "N",
	"max-lag": "DURATION", "min-lag": "DURATION", "delete-retention": "DURATION", "producer-id-expiration": "DURATION",
	"retention-ms": "DURATION", "granularity": "DURATION", "time-step": "DURATION",
	"now": "TIME", "from-time": "TIME", "to-time": "TIME", "start-time": "TIME", "timestamp": "TIME",
	"append-time": "TIME|file-mtime", "clean-time": "TIME|unknown|file-mtime",
	"segment-bytes": "SIZE", "offset-map-memory": "SIZE", "max-message-size": "SIZE", "max-bytes": "SIZE",
	"value-bytes": "SIZE", "interval-bytes": "SIZE", "retention-bytes": "SIZE",
	"offset": "OFFSET", "from-offset": "OFFSET", "to-offset": "OFFSET",
	"topic":       "REGEX",
	"key-decoder": "DECODER", "value-decoder": "DECODER", "key-decoder-class": "CLASS", "value-decoder-class": "CLASS",
	"compression": "CODEC", "timestamp-type": "create|log-append", "to-magic": "1|2", "magic": "0|1|2",
	"min-cleanable-ratio": "RATIO", "tombstone-ratio": "RATIO", "transactional-ratio": "RATIO", "abort-ratio": "RATIO",
	"out": "DIR", "output": "DIR", "files": "FILE,...",
	"config": "TOPIC:NAME=VALUE", "broker-config": "NAME=VALUE",
	"topic-config": "FILE", "cleanup-policy": "POLICY", "unlisted-topics": "skip|defaults",
}

// metavar returns the placeholder of flag f, "" for a flag that takes no
// value.
func metavar(f cli.Flag) string {
	d, ok := f.(cli.DocGenerationFlag)
	if !ok || !d.TakesValue() {
		return ""
	}
	if name, _ := unquoteUsage(d.GetUsage()); name != "" {
		return name
	}
	if m, ok := metavars[f.Names()[0]]; ok {
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

// flagString is cli.FlagStringer: "--max-lag DURATION<TAB>usage (default:
// unlimited)", without urfave/cli's "(default: false)" on every switch or
// quotes around string defaults.
func flagString(f cli.Flag) string {
	d, ok := f.(cli.DocGenerationFlag)
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
	if m := metavar(f); m != "" {
		s += " " + m
	}
	_, usage := unquoteUsage(d.GetUsage())
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
func commandFlags(cmd *cli.Command) []cli.Flag {
	// A flag named as a global one but with a usage of its own (export's
	// --format) is the command's.
	global := map[string]string{}
	for _, f := range globalFlags() {
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
func synopsisWords(cmd *cli.Command) []string {
	var words []string
	for _, f := range commandFlags(cmd) {
		name := f.Names()[0]
		if strings.Contains(cmd.ArgsUsage+" ", "--"+name+" ") {
			continue
		}
		w := "--" + name
		if m := metavar(f); m != "" {
			w += " " + m
		}
		words = append(words, "["+w+"]")
	}
	switch {
	case strings.HasPrefix(cmd.ArgsUsage, "--"): // a required flag
		words = append([]string{cmd.ArgsUsage}, words...)
	case cmd.ArgsUsage != "":
		words = append(words, cmd.ArgsUsage)
	}
	return words
}

// synopsis is a command's usage line wrapped at width, continuation lines
// aligned under the first flag:
//
//	logtool dump [--deep-iteration] [--key-decoder DECODER]
//	             [--summary] PATH...
func synopsis(cmd *cli.Command, width int) []string {
	head := "logtool " + cmd.Name
	var lines []string
	line := head
	for _, w := range synopsisWords(cmd) {
		if len(line)+1+len(w) > width && len(line) > len(head) {
			lines = append(lines, line)
			line = strings.Repeat(" ", len(head))
		}
		line += " " + w
	}
	return append(lines, line)
}

// helpCommand is "logtool help [COMMAND]", which urfave/cli's own help
// command answers for an unknown command with exit 3, the contract's code
// for problems found.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:        "help",
		Category:    "tools",
		Usage:       "show the help of logtool or of a command (as --help does)",
		ArgsUsage:   "[COMMAND]",
		Description: description("help"),
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
				return cli.ShowAppHelp(c)
			case 1:
				name := c.Args().First()
				if cmd := c.App.Command(name); cmd == nil || cmd.Hidden {
					return usageErr("unknown command %q (commands: %s)", name, strings.Join(commandNames(c.App), ", "))
				}
				return cli.ShowCommandHelp(c, name)
			}
			return usageErr("want at most one COMMAND, got %d arguments", c.NArg())
		},
	}
}

func commandNames(app *cli.App) []string {
	var names []string
	for _, c := range app.VisibleCommands() {
		names = append(names, c.Name)
	}
	return names
}

func init() {
	cli.FlagStringer = flagString
	// A command's usage line is its synopsis, made when its help is shown
	// rather than for every command at every start (a millisecond and more).
	printer := cli.HelpPrinter
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		if cmd, ok := data.(*cli.Command); ok && cmd.UsageText == "" && !cmd.Hidden {
			cmd.UsageText = strings.Join(synopsis(cmd, 100), "\n")
		}
		printer(w, templ, data)
	}
}
