package commands

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/migrate/checkpoints"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "migrate-checkpoints",
		Category:    "repair and convert",
		Usage:       "move cleaner checkpoints from the per-disk file to per-partition files with a clean time, and back",
		ArgsUsage:   "LOGDIR...",
		Description: description("migrate-checkpoints"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "reverse", Usage: "rebuild cleaner-offset-checkpoint from the per-partition files, for a stock broker, which reads only that file"},
			&cli.StringFlag{Name: "clean-time", Value: "unknown", Usage: "clean time of migrated entries: unknown, file-mtime (risky: it can expire tombstones early, see --help) or MS"},
			&cli.BoolFlag{Name: "keep-old", Usage: "leave the source in place (the root file; with --reverse the per-partition and .migrated files)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "let the source win where the destination holds a different offset"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and write nothing"},
		},
		Action: runMigrate,
	}
}

func runMigrate(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	opts, err := migrateOptions(c, g)
	if err != nil {
		return err
	}
	// A dry run plans what a run would do: it refuses what the run would.
	access := target.Write
	if opts.DryRun {
		access = target.Stable
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "migrate-checkpoints", Takes: target.LogDirs, Writes: true}, access)
	if err != nil {
		return err
	}
	defer release()
	var refused []string
	opts.LogDirs, refused = checkpoints.LogDirs(set)
	for _, d := range refused {
		fmt.Fprintf(g.Stderr, "logtool: migrate-checkpoints: %s: left unchanged: it holds a partition a broker cannot load\n", d)
	}
	if len(opts.LogDirs) == 0 && len(refused) > 0 {
		return nil // the run's exit says what was left unchanged
	}
	rep, err := checkpoints.Migrate(opts)
	if err != nil {
		return migrateErr(err, opts.Reverse)
	}
	if g.Quiet && !rep.DryRun { // a dry run's plan is its only output
		return nil
	}
	if g.JSON() {
		return rep.WriteJSON(g.Stdout)
	}
	return rep.WriteText(g.Stdout)
}

func migrateOptions(c *cli.Context, g Global) (checkpoints.Options, error) {
	opts := checkpoints.Options{
		Reverse: c.Bool("reverse"), KeepOld: c.Bool("keep-old"),
		Overwrite: c.Bool("overwrite"), DryRun: c.Bool("dry-run"), Workers: g.Workers,
	}
	if c.NArg() == 0 {
		return opts, usageErr("no LOGDIR given")
	}
	if opts.Reverse && c.IsSet("clean-time") {
		return opts, usageErr("--clean-time applies to forward migration only; --reverse drops clean times")
	}
	var err error
	if opts.CleanTime, opts.CleanTimeMs, err = parseCleanTime(c.String("clean-time")); err != nil {
		return opts, err
	}
	if opts.CleanTime == checkpoints.CleanTimeFileMtime {
		g.Warnf("--clean-time file-mtime: the root file's modification time can be later than a partition's last " +
			"cleaning, which makes its tombstones expire too early")
	}
	return opts, nil
}

// migrateErr names the flag that resolves a conflict.
func migrateErr(err error, reverse bool) error {
	if !errors.Is(err, checkpoints.ErrConflict) {
		return err
	}
	source := "the root file"
	if reverse {
		source = "the per-partition files"
	}
	return fmt.Errorf("%w; nothing written (--overwrite lets %s win)", err, source)
}

// parseCleanTime reads --clean-time. "-1" is accepted as "unknown", the
// value it stands for in the file.
func parseCleanTime(s string) (checkpoints.CleanTimeSource, int64, error) {
	switch s {
	case "unknown", "-1":
		return checkpoints.CleanTimeUnknown, -1, nil
	case "file-mtime":
		return checkpoints.CleanTimeFileMtime, 0, nil
	}
	ms, err := timeArg("clean-time", s, 0)
	if err != nil {
		return 0, 0, err
	}
	return checkpoints.CleanTimeFixed, ms, nil
}
