package clidoc

import (
	"errors"
	"testing"
)

func TestFlagWords(t *testing.T) {
	for _, tc := range []struct {
		err  string
		args []string
		cmd  string
		want string
	}{
		{"flag provided but not defined: -nope", []string{"logtool", "dump", "--nope"}, "dump", "flag provided but not defined: --nope (see logtool dump --help)"},
		{"flag provided but not defined: -x", []string{"logtool", "-x"}, "", "flag provided but not defined: -x (see logtool --help)"},
		{`invalid value "a" for flag -workers: parse error`, []string{"logtool", "dump", "-workers=a"}, "dump", `invalid value "a" for flag -workers: parse error (see logtool dump --help)`},
		{`invalid value "a" for flag -workers: parse error`, nil, "dump", `invalid value "a" for flag --workers: parse error (see logtool dump --help)`},
		{"no PATH given", nil, "dump", "no PATH given"},
	} {
		if got := FlagWords(errors.New(tc.err), tc.args, tc.cmd).Error(); got != tc.want {
			t.Errorf("FlagWords(%q, %q) = %q, want %q", tc.err, tc.args, got, tc.want)
		}
	}
}
