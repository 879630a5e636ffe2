package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The shells ask logtool itself for candidates: urfave/cli answers a command
// line ending in --generate-bash-completion with the subcommands or flags
// that fit, so the scripts only forward the words typed so far.
const bashCompletion = `# bash completion for logtool; load with: source <(logtool completion bash)
_logtool_complete() {
  local cur words
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _logtool_complete logtool
`

const zshCompletion = `#compdef logtool
# zsh completion for logtool; load with: source <(logtool completion zsh)
_logtool() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} "$cur" --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'values' opts
  fi
  _files
}
compdef _logtool logtool
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Category:  "tools",
		Usage:     "print a shell completion script (bash or zsh)",
		ArgsUsage: "bash|zsh",
		Description: "Examples:\n" +
			"  source <(logtool completion bash)      # in ~/.bashrc\n" +
			"  logtool completion zsh > \"${fpath[1]}/_logtool\"",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("want one shell, bash or zsh, got %d argument(s)", c.NArg())
			}
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, zshCompletion)
				return err
			}
			return usageErr("want bash or zsh, got %q", c.Args().First())
		},
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:     "man",
		Category: "tools",
		Usage:    "print the manual page (roff); e.g. logtool man > /usr/local/share/man/man1/logtool.1",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("unexpected argument %q", c.Args().First())
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}
