package dump

import (
	"testing"

	"github.com/logtool/logtool/internal/target"
)

// TestChoose: a text dump of a whole log directory is its summary unless
// the content or JSON is asked for, and --summary, given, decides alone;
// the index checks print no table.
func TestChoose(t *testing.T) {
	file := &target.Set{Items: []target.Item{{File: &target.File{}}}}
	logDir := &target.Set{Items: []target.Item{{Root: &target.LogDir{Path: t.TempDir()}}}}
	yes, no := true, false
	for _, tc := range []struct {
		name                 string
		set                  *target.Set
		json, index, content bool
		summary              *bool
		only, table          bool
	}{
		{name: "file", set: file},
		{name: "file --summary", set: file, summary: &yes, only: true, table: true},
		{name: "log dir", set: logDir, only: true, table: true},
		{name: "log dir, content", set: logDir, content: true, table: true},
		{name: "log dir, json", set: logDir, json: true, table: true},
		{name: "log dir --summary=false", set: logDir, summary: &no, table: true},
		{name: "log dir, index check", set: logDir, index: true, only: true},
	} {
		o := DefaultOptions()
		o.JSON, o.VerifyIndexOnly = tc.json, tc.index
		if err := o.Choose(tc.set, tc.summary, tc.content); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if o.SummaryOnly != tc.only || o.Summary != tc.table {
			t.Errorf("%s: SummaryOnly %v, Summary %v; want %v, %v", tc.name, o.SummaryOnly, o.Summary, tc.only, tc.table)
		}
	}
}
