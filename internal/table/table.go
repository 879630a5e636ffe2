// Package table prints the tables of logtool's text output. Every summary
// (dump's, and those of the repair commands) goes through it so that they
// all look alike: no borders, a header line, columns left-aligned and
// separated by two spaces, no trailing blanks. That is how Kafka's
// kafka-consumer-groups.sh prints, and it keeps a row on one line that grep
// finds and a diff shows as one change.
package table

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table collects rows and prints them aligned. Cells are printed as given:
// sizes, times and durations come formatted from internal/human.
type Table struct {
	header []string
	rows   [][]string
}

// New returns a table with these column headers.
func New(header ...string) *Table {
	return &Table{header: header}
}

// Append adds a row. A row shorter than the header is padded with empty
// cells.
func (t *Table) Append(cells ...string) {
	row := make([]string, max(len(cells), len(t.header)))
	copy(row, cells)
	t.rows = append(t.rows, row)
}

// Len is the number of rows appended.
func (t *Table) Len() int { return len(t.rows) }

// WriteTo prints the header and the rows.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	tab := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
	tab.Header(t.header)
	if err := tab.Bulk(t.rows); err != nil {
		return 0, err
	}
	if err := tab.Render(); err != nil {
		return 0, err
	}
	// The renderer pads every cell, the last one too; trailing blanks only
	// get in the way of diff and grep.
	var out bytes.Buffer
	for line := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	return out.WriteTo(w)
}
