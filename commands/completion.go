package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/dump"
)

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

const bashCompletion = `# bash completion for logtool; load with: source <(logtool completion bash)
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
const zshCompletion = `#compdef logtool
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
			cands, paths := completions(c.App, c.Args().Slice())
			for _, cand := range cands {
				if _, err := fmt.Fprintf(c.App.Writer, "%s\t%s\n", cand.word, cand.desc); err != nil {
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

type completion struct{ word, desc string }

// completions returns the candidates for the last of words, and ":files"
// or ":dirs" when a path goes there.
func completions(app *cli.App, words []string) (out []completion, paths string) {
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
			out = append(out, completion{word, desc})
		}
	}
	cmdName := ""
	if cmd != nil {
		cmdName = cmd.Name
	}
	switch {
	case pending != nil:
		for _, v := range flagValues(cmdName, pending.Names()[0]) {
			add(v, "")
		}
		if m := metavar(pending); isPathMetavar(m) {
			return out, pathKind(m)
		}
	case !positional && len(cur) > 0 && cur[0] == '-':
		if name, _, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			// zsh keeps "--format=js" one word.
			prefix := cur[:strings.IndexByte(cur, '=')+1]
			if f := findFlag(flags, name); f != nil {
				for _, v := range flagValues(cmdName, name) {
					add(prefix+v, "")
				}
			}
			break
		}
		for _, f := range flags {
			usage := ""
			if d, ok := f.(cli.DocGenerationFlag); ok {
				_, usage = unquoteUsage(d.GetUsage())
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
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
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
