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
	cli.FlagStringer = doc().FlagString
	// A command's usage line is its synopsis, made when its help is shown
	// rather than for every command at every start (a millisecond and more).
	printer := cli.HelpPrinter
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		if cmd, ok := data.(*cli.Command); ok && cmd.UsageText == "" && !cmd.Hidden {
			cmd.UsageText = strings.Join(doc().Synopsis(cmd, 100), "\n")
		}
		printer(w, templ, data)
	}
}
