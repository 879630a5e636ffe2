package clidoc

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// ManCommand is "logtool man", which prints the manual page; desc is its
// long help.
func (d *Doc) ManCommand(desc string) *cli.Command {
	return &cli.Command{
		Name:        "man",
		Category:    "tools",
		Usage:       "print the manual page (roff)",
		Description: desc,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return d.UsageErr("unexpected argument %q", c.Args().First())
			}
			_, err := fmt.Fprint(c.App.Writer, d.ManPage(c.App))
			return err
		},
	}
}

// CompletionCommand is "logtool completion bash|zsh", which prints a
// completion script; desc is its long help.
func (d *Doc) CompletionCommand(desc string) *cli.Command {
	return &cli.Command{
		Name:        "completion",
		Category:    "tools",
		Usage:       "print a shell completion script (bash or zsh)",
		ArgsUsage:   "bash|zsh",
		Description: desc,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return d.UsageErr("want one shell, bash or zsh, got %d argument(s)", c.NArg())
			}
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, Bash)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, Zsh)
				return err
			}
			return d.UsageErr("want bash or zsh, got %q", c.Args().First())
		},
	}
}

// CompleteCommand answers the completion scripts. Its arguments are the
// words after "logtool" up to the one being completed (empty at a word
// boundary); it prints one candidate per line, "word<TAB>description", then
// ":files" or ":dirs" where a path goes, for the shell to complete a file
// name; nothing where neither fits (a number, a time).
func (d *Doc) CompleteCommand() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			cands, paths := d.Completions(c.App, c.Args().Slice())
			for _, cand := range cands {
				if _, err := fmt.Fprintf(c.App.Writer, "%s\t%s\n", cand.Word, cand.Desc); err != nil {
					return err
				}
			}
			if paths != "" {
				_, err := fmt.Fprintln(c.App.Writer, paths)
				return err
			}
			return nil
		},
	}
}
