// Package commands holds logtool's subcommands. Each is a thin layer: it
// turns flags into an options struct, calls a library package and writes to
// the app's writers, so tests run commands in-process.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/clidoc"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/logfmt"
)

// Exit codes of the contract.
const (
	ExitOK       = 0
	ExitFailure  = 1 // I/O error or corrupt input that stops the operation
	ExitUsage    = 2 // bad flags or arguments
	ExitProblems = 3 // a check found problems; data untouched
	ExitRefused  = 4 // refused for safety (a broker holds the log dir's lock, or an overwrite)
)

// exitStatus says what each exit code means, for the manual page.
var exitStatus = []clidoc.Entry{
	{Term: "0", Text: "Success."},
	{Term: "1", Text: "Failure: an I/O error, or unreadable or corrupt input that stops the operation (of a partition: the " +
		"others go on, and each failure is named on stderr). Nothing half-written is left behind. Also a writing command " +
		"that left a partition a broker cannot load unchanged."},
	{Term: "2", Text: "Usage error: an unknown flag, a bad value, missing or contradictory arguments, a path that is not what " +
		"the command needs."},
	{Term: "3", Text: "A check found problems (verify, reindex --check, dump --verify-index-only or --index-sanity-check, replicas), " +
		"or a reading command read a partition a broker cannot load; the data is untouched."},
	{Term: "4", Text: "Refused for safety: a running broker holds the log directory's .lock, or the operation would " +
		"overwrite something it must not."},
}

// appDescription is the first paragraph of logtool's help, which the
// manual page's description is.
var appDescription, _, _ = strings.Cut(description("logtool"), "\n\n")

// ExitError carries an exit code; the message is printed as
// "logtool: <command>: <message>".
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

func usageErr(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// optionErr is the usage error for an option a library refused: a
// *fielderr.Error is worded with the flag the option came from (flags maps
// Options fields to flag names), another error stays as it is.
func optionErr(err error, flags map[string]string) error {
	fe, ok := errors.AsType[*fielderr.Error](err)
	switch {
	case err == nil:
		return nil
	case !ok:
		return &ExitError{Code: ExitUsage, Err: err}
	}
	name := fe.Field
	if f, ok := flags[fe.Field]; ok {
		name = "--" + f
	}
	return &ExitError{Code: ExitUsage, Err: errors.New(fe.Named(name))}
}

// problemsErr reports that a check found n problems (exit 3).
func problemsErr(n int) error {
	return &ExitError{Code: ExitProblems, Err: fmt.Errorf("%d problem(s) found", n)}
}

// exitCode maps an error to the contract's exit codes.
func exitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, refuse.ErrRefused):
		return ExitRefused
	}
	return ExitFailure
}

// globalFlags may be given before or after the command name.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "text", Usage: "output: text (Kafka-compatible lines, tables) or json (JSON Lines on stdout)"},
		&cli.IntFlag{Name: "workers", Value: runtime.GOMAXPROCS(0), DefaultText: "GOMAXPROCS, the number of CPUs", Usage: "partitions processed at once; workers left over decode the batches of each"},
		&cli.BoolFlag{Name: "no-progress", Usage: "never draw progress bars"},
		&cli.BoolFlag{Name: "quiet", Usage: "only errors on stderr"},
		&cli.BoolFlag{Name: "wide", Usage: "text tables with every column; by default the columns that fit a 120-column terminal"},
		&cli.StringFlag{Name: "max-record-bytes", Value: "64MiB", Usage: "refuse a record of a compressed batch larger than this rather than hold it in memory"},
	}
}

// Global are the parsed global flags.
type Global struct {
	Format     string
	Workers    int
	NoProgress bool
	Quiet      bool
	Wide       bool
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter.MaxRecordBytes).
	MaxRecordBytes int
	Stdout         io.Writer
	Stderr         io.Writer
	// unloadable is the run's count of partitions a broker cannot load;
	// nil outside Run.
	unloadable *unloadable
}

// unloadable counts the partitions holding an entry on which a broker's
// load fails (target.Set.Refused), which the step every command shares
// reports, so that the run's exit code says so whatever the command did
// with the rest: 3 for a reader, as for damage it reports, 1 for a writer,
// which left them unchanged.
type unloadable struct {
	n      int
	writer bool
}

type unloadableKey struct{}

// exit is the error of a run whose command returned err.
func (u *unloadable) exit(err error) error {
	if u.n == 0 {
		return err
	}
	code, msg := ExitProblems, fmt.Sprintf("%d partition(s) hold an entry a broker cannot load", u.n)
	if u.writer {
		code, msg = ExitFailure, fmt.Sprintf("%d partition(s) left unchanged: a broker cannot load them", u.n)
	}
	switch exitCode(err) {
	case ExitOK:
		return &ExitError{Code: code, Err: errors.New(msg)}
	case ExitProblems:
		return &ExitError{Code: code, Err: fmt.Errorf("%s; %w", msg, err)}
	}
	return err
}

// JSON reports whether JSON Lines output was asked for.
func (g Global) JSON() bool { return g.Format == "json" }

// Warnf prints a warning line unless --quiet.
func (g Global) Warnf(format string, args ...any) {
	if !g.Quiet {
		fmt.Fprintf(g.Stderr, "logtool: warning: "+format+"\n", args...)
	}
}

// globalFlag returns the value of a global flag from whichever level of the
// command line set it, the command's own level first.
func globalFlag[T any](c *cli.Context, name string, get func(*cli.Context, string) T) T {
	for _, ctx := range c.Lineage() {
		if slices.Contains(ctx.LocalFlagNames(), name) {
			return get(ctx, name)
		}
	}
	return get(c, name)
}

func global(c *cli.Context) (Global, error) { return globalArgs(c, c.Args().Slice()) }

// globalArgs is global for a command that took its own flags out of the
// arguments first (salvage PARTITION_DIR --out DIR, as the contract writes it).
func globalArgs(c *cli.Context, args []string) (Global, error) {
	g := Global{
		Format:     globalFlag(c, "format", (*cli.Context).String),
		Workers:    globalFlag(c, "workers", (*cli.Context).Int),
		NoProgress: globalFlag(c, "no-progress", (*cli.Context).Bool),
		Quiet:      globalFlag(c, "quiet", (*cli.Context).Bool),
		Wide:       globalFlag(c, "wide", (*cli.Context).Bool),
		Stdout:     c.App.Writer,
		Stderr:     c.App.ErrWriter,
	}
	g.unloadable, _ = c.Context.Value(unloadableKey{}).(*unloadable)
	if formats := commandFormats(c.Command.Name); !slices.Contains(formats, g.Format) {
		return g, usageErr("--format: want %s, got %q", strings.Join(formats, " or "), g.Format)
	}
	if g.Workers < 1 {
		return g, usageErr("--workers: want at least 1, got %d", g.Workers)
	}
	// A record's length is an int32.
	n, err := sizeArg("max-record-bytes", globalFlag(c, "max-record-bytes", (*cli.Context).String), 1, math.MaxInt32)
	if err != nil {
		return g, err
	}
	g.MaxRecordBytes = int(n)
	// The parser stops at the first path and takes what follows for more
	// paths: "dump DIR --format json" would look for a file named
	// "--format". Say so rather than fail on a missing file.
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			return g, usageErr("%s after a path: flags go before the paths (logtool %s [flags] PATH...)", a, c.Command.Name)
		}
	}
	return g, nil
}

// commandFormats are the --format values a command takes: text and json,
// but export, whose records are JSON Lines either way, takes json or kcat
// and has a --format flag of its own saying so.
func commandFormats(command string) []string {
	if command == "export" {
		return []string{"json", "kcat"}
	}
	return []string{"text", "json"}
}

// NewApp builds the logtool command line.
func NewApp() *cli.App {
	d := doc()
	app := &cli.App{
		Name:        "logtool",
		Version:     buildInfo().Version,
		Usage:       "inspect, repair and convert Apache Kafka log directories offline",
		Description: description("logtool"),
		// urfave/cli adds --help only when it adds its own help command,
		// which helpCommand replaces.
		Flags:                append(globalFlags(), cli.HelpFlag),
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &ExitError{Code: ExitUsage, Err: err}
		},
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(c.App.ErrWriter, "logtool: unknown command %q (see logtool --help)\n", name)
		},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	app.Commands = []*cli.Command{
		dumpCommand(),
		findCommand(),
		grepCommand(),
		verifyCommand(),
		replicasCommand(),
		digestCommand(),
		reindexCommand(),
		upgradeCommand(),
		migrateCommand(),
		compactCommand(),
		retentionCommand(),
		exportCommand(),
		salvageCommand(),
		replayCommand(),
		genCommand(),
		d.CompletionCommand(description("completion")),
		d.ManCommand(description("man")),
		helpCommand(),
		d.CompleteCommand(),
	}
	// Names() splits a flag's name with a regular expression: asked once
	// a flag, not once a pair, the app is made in a fraction of the time.
	var globals []string
	for _, f := range globalFlags() {
		globals = append(globals, f.Names()[0])
	}
	for _, cmd := range app.Commands {
		// Else urfave/cli gives each command a "help" subcommand, which
		// takes "logtool dump help" for a request of help, not a path.
		cmd.HideHelpCommand = true
		own := map[string]bool{}
		for _, o := range cmd.Flags {
			own[o.Names()[0]] = true
		}
		for i, f := range globalFlags() {
			// A command's own flag of the same name (export's --format)
			// is the one its help lists.
			if !own[globals[i]] {
				cmd.Flags = append(cmd.Flags, f)
			}
		}
		cmd.OnUsageError = app.OnUsageError
	}
	return app
}

// Run runs logtool with args (args[0] is the program name) and returns the
// exit code, printing any error as one line on stderr.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := NewApp()
	app.Reader, app.Writer, app.ErrWriter = stdin, stdout, stderr
	unknown := false
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown = true
		fmt.Fprintf(stderr, "logtool: unknown command %q (see logtool --help)\n", name)
	}
	// Error lines name the command that failed, as the contract wants; the
	// parser knows which word that is, a scan of args would not.
	prefix := ""
	for _, cmd := range app.Commands {
		name, action, onUsage := cmd.Name, cmd.Action, cmd.OnUsageError
		cmd.Action = func(c *cli.Context) error {
			prefix = name + ": "
			u := &unloadable{}
			c.Context = context.WithValue(c.Context, unloadableKey{}, u)
			return u.exit(action(c))
		}
		cmd.OnUsageError = func(c *cli.Context, err error, sub bool) error {
			prefix = name + ": "
			return onUsage(c, clidoc.FlagWords(err, args, name), sub)
		}
	}
	// A global flag before the command fails in the app's parse.
	appUsage := app.OnUsageError
	app.OnUsageError = func(c *cli.Context, err error, sub bool) error {
		return appUsage(c, clidoc.FlagWords(err, args, ""), sub)
	}
	// With no command there is nothing to do: the help goes to stderr, as
	// for any other usage error, and the exit code says so.
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return usageErr("unknown command %q (see logtool --help)", c.Args().First())
		}
		c.App.Writer = stderr
		if err := cli.ShowAppHelp(c); err != nil {
			return err
		}
		return usageErr("no command given")
	}
	err := app.Run(args)
	if unknown {
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "logtool: %s%s\n", prefix, oneLine(err))
	}
	return exitCode(err)
}

func oneLine(err error) string {
	// Each of joined errors is said, not only the first path error found
	// among them.
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			parts = append(parts, oneLine(e))
		}
		return strings.Join(parts, "; ")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && !isCorrupt(err) {
		return fmt.Sprintf("%s: %v", pe.Path, pe.Err)
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func isCorrupt(err error) bool {
	_, ok := logfmt.AsCorrupt(err)
	return ok
}
