package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/internal/clidoc"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:        "completion",
		Category:    "tools",
		Usage:       "print a shell completion script (bash or zsh)",
		ArgsUsage:   "bash|zsh",
		Description: description("completion"),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("want one shell, bash or zsh, got %d argument(s)", c.NArg())
			}
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, clidoc.Bash)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, clidoc.Zsh)
				return err
			}
			return usageErr("want bash or zsh, got %q", c.Args().First())
		},
	}
}

// completeCommand answers the completion scripts. Its arguments are the
// words after "logtool" up to the one being completed (empty at a word
// boundary); it prints one candidate per line, "word<TAB>description", then
// ":files" or ":dirs" where a path goes, for the shell to complete a file
// name; nothing where neither fits (a number, a time).
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			cands, paths := doc().Completions(c.App, c.Args().Slice())
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

// flagValues lists the words a flag takes, for the flags that take one of a
// few; the others (numbers, times, paths) get no candidates.
func flagValues(cmd, flag string) []string {
	switch flag {
	case "format":
		return commandFormats(cmd)
	case "key-decoder", "value-decoder":
		return []string{"string", "hex", "base64", "none"}
	case "kafka-version":
		return dump.Releases()
	case "compression":
		if cmd == "upgrade" {
			return []string{"keep", "none", "gzip", "snappy", "lz4", "zstd"}
		}
		return []string{"none", "gzip", "snappy", "lz4", "zstd"}
	case "timestamp-type":
		return []string{"create", "log-append"}
	case "append-time":
		return []string{"file-mtime"}
	case "clean-time":
		return []string{"unknown", "file-mtime"}
	case "to-magic":
		return []string{"1", "2"}
	case "magic":
		return []string{"0", "1", "2"}
	case "max-lag":
		switch cmd {
		case "compact":
			return []string{"unlimited"}
		case "grep":
			return []string{"topic"}
		}
	case "cleanup-policy":
		return []string{"delete", "compact", "compact,delete"}
	}
	return nil
}
