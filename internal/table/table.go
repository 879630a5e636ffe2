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
	"os"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/olekukonko/tablewriter"
)

func init() {
	// In a Chinese, Japanese or Korean locale go-runewidth, which measures
	// cells for tablewriter, counts East Asian ambiguous characters (±, °,
	// Greek) as two columns: tables are laid out alike in every locale, as
	// before, unless RUNEWIDTH_EASTASIAN asks otherwise.
	if os.Getenv("RUNEWIDTH_EASTASIAN") == "" {
		runewidth.DefaultCondition.EastAsianWidth = false
	}
}

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
	for i, c := range cells {
		// A tab's width is the terminal's to choose, so it would break
		// the alignment: four spaces, as tablewriter v1 printed it.
		row[i] = strings.ReplaceAll(c, "\t", "    ")
	}
	t.rows = append(t.rows, row)
}

// Drop removes the columns with these headers, for a narrow table (--wide
// keeps them); a header the table does not have is ignored.
func (t *Table) Drop(headers ...string) {
	for i := len(t.header) - 1; i >= 0; i-- {
		if !slices.Contains(headers, t.header[i]) {
			continue
		}
		t.header = slices.Delete(t.header, i, i+1)
		for j, row := range t.rows {
			if i < len(row) {
				t.rows[j] = slices.Delete(row, i, i+1)
			}
		}
	}
}

// Len is the number of rows appended.
func (t *Table) Len() int { return len(t.rows) }

// WriteTo prints the header and the rows.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	tab := tablewriter.NewWriter(&buf)
	tab.SetHeader(t.header)
	tab.SetAutoFormatHeaders(false)
	tab.SetAutoWrapText(false)
	tab.SetHeaderAlignment(tablewriter.ALIGN_LEFT)
	tab.SetAlignment(tablewriter.ALIGN_LEFT)
	tab.SetBorder(false)
	tab.SetHeaderLine(false)
	tab.SetColumnSeparator("")
	tab.SetRowSeparator("")
	tab.SetCenterSeparator("")
	tab.SetTablePadding("  ")
	tab.SetNoWhiteSpace(true)
	tab.AppendBulk(t.rows)
	tab.Render()
	var out bytes.Buffer
	for line := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	return out.WriteTo(w)
}
