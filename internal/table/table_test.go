package table

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestWriteTo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{
			name:   "aligned",
			header: []string{"PARTITION", "SIZE", "FIRST TIMESTAMP"},
			rows: [][]string{
				{"orders-0", "130.8 KiB", "2024-01-01T00:00:00Z"},
				{"legacy.events-v0-snappy-0", "31.8 KiB", "-"},
			},
			want: "" +
				"PARTITION                  SIZE       FIRST TIMESTAMP\n" +
				"orders-0                   130.8 KiB  2024-01-01T00:00:00Z\n" +
				"legacy.events-v0-snappy-0  31.8 KiB   -\n",
		},
		{
			// Cells are printed as given: no case change, no trimming
			// inside, an empty last cell leaves no trailing blank.
			name:   "as given",
			header: []string{"rule", "note"},
			rows:   [][]string{{"retention-ms,log-start", ""}, {"a  b", "x"}},
			want: "" +
				"rule                    note\n" +
				"retention-ms,log-start\n" +
				"a  b                    x\n",
		},
		{
			// Columns line up by display width, not bytes.
			name:   "wide characters",
			header: []string{"TOPIC", "N"},
			rows:   [][]string{{"événements-0", "1"}, {"e-0", "2"}},
			want: "" +
				"TOPIC         N\n" +
				"événements-0  1\n" +
				"e-0           2\n",
		},
		{
			name:   "short row",
			header: []string{"A", "B", "C"},
			rows:   [][]string{{"x"}, {"y", "z", "w"}},
			want:   "A  B  C\nx\ny  z  w\n",
		},
		{
			name:   "no rows",
			header: []string{"SEGMENT", "SIZE"},
			want:   "SEGMENT  SIZE\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := New(tc.header...)
			for _, r := range tc.rows {
				tab.Append(r...)
			}
			if tab.Len() != len(tc.rows) {
				t.Errorf("Len %d, want %d", tab.Len(), len(tc.rows))
			}
			var buf bytes.Buffer
			n, err := tab.WriteTo(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if n != int64(buf.Len()) {
				t.Errorf("WriteTo returned %d, wrote %d", n, buf.Len())
			}
		})
	}
}

// TestWriteToTab: a cell may hold a tab (a path given on the command line
// is printed as given); a tab's width depends on where the terminal puts
// its stops, so a table that measures it as nothing loses its alignment.
func TestWriteToTab(t *testing.T) {
	tab := New("FILE", "N")
	tab.Append("a\tb", "1")
	tab.Append("abcdefghij", "2")
	var buf bytes.Buffer
	if _, err := tab.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	col := -1
	for _, l := range lines {
		if strings.Contains(l, "\t") {
			t.Errorf("a tab is printed: %q", l)
		}
		c := strings.LastIndex(l, " ") + 1
		if col >= 0 && c != col {
			t.Errorf("the last column starts at %d in %q, at %d above", c, l, col)
		}
		col = c
	}
}

// TestWriteToLocale: a table is laid out the same whatever the locale. In
// a Chinese, Japanese or Korean locale (LANG, LC_CTYPE, LC_ALL) go-runewidth
// counts East Asian "ambiguous" characters (±, °, ×, Greek, box drawing) as
// two columns, which tablewriter v1 did not: the same command printed other
// bytes on such a machine than in the golden files. The table is printed by
// a copy of this test binary started in such a locale.
func TestWriteToLocale(t *testing.T) {
	tab := New("CELL", "N")
	tab.Append("±°×αβ", "1")
	tab.Append("abcdefghij", "2")
	if os.Getenv("LOGTOOL_TABLE_LOCALE_CHILD") == "1" {
		tab.WriteTo(os.Stdout)
		return
	}
	want := "" +
		"CELL        N\n" +
		"±°×αβ       1\n" +
		"abcdefghij  2\n"
	for _, env := range []string{"LANG=ja_JP.UTF-8", "LC_CTYPE=zh_CN.UTF-8", "LC_ALL=ko_KR.UTF-8"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriteToLocale$")
		cmd.Env = []string{"LOGTOOL_TABLE_LOCALE_CHILD=1", env}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if got, _, _ := strings.Cut(string(out), "PASS\n"); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", env, got, want)
		}
	}
}
