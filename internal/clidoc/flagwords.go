package clidoc

import (
	"fmt"
	"regexp"
	"strings"
)

// flagPhrase matches the flag package's way of naming a flag, one dash
// whatever the user typed.
var flagPhrase = regexp.MustCompile(`(not defined: |for flag )-([^\s:=]+)`)

// FlagWords names flags in a usage error as the user typed them (--workers,
// not the flag package's -workers) and points at the command's help, or
// logtool's when cmd is "".
func FlagWords(err error, args []string, cmd string) error {
	if !flagPhrase.MatchString(err.Error()) {
		return err
	}
	msg := flagPhrase.ReplaceAllStringFunc(err.Error(), func(m string) string {
		sub := flagPhrase.FindStringSubmatch(m)
		return sub[1] + typedFlag(sub[2], args)
	})
	if cmd == "" {
		return fmt.Errorf("%s (see logtool --help)", msg)
	}
	return fmt.Errorf("%s (see logtool %s --help)", msg, cmd)
}

// typedFlag is the flag name with the dashes the user gave it, or the
// contract's (--name, -n) when the word is not in args.
func typedFlag(name string, args []string) string {
	for _, a := range args {
		word, _, _ := strings.Cut(a, "=")
		if strings.TrimLeft(word, "-") == name && strings.HasPrefix(word, "-") {
			return word
		}
	}
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
