package clidoc

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestSynopsisOrder: a usage line gives required flags first and paths last,
// the optional flags between, as the command line takes them (a flag after
// a path is refused): digest's read "--out FILE LOGDIR... [--all-records]".
func TestSynopsisOrder(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "out", Usage: "the `FILE` to write"},
		&cli.BoolFlag{Name: "all-records", Usage: "hash every record"},
	}
	for _, c := range []struct {
		args string
		want []string
	}{
		{"--out FILE LOGDIR...", []string{"--out FILE", "[--all-records]", "LOGDIR..."}},
		{"--out FILE", []string{"--out FILE", "[--all-records]"}},
		{"PATH...", []string{"[--out FILE]", "[--all-records]", "PATH..."}},
	} {
		got := (&Doc{}).synopsisWords(&cli.Command{Name: "x", ArgsUsage: c.args, Flags: flags})
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}
