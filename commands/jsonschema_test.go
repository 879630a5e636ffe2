package commands

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// The JSON schema of every command is docs/json.md: a "## `command`"
// section per command, a "### `type`" table per object type ("### record
// line" for export's lines, which have none), a row per field with its
// JSON types. TestJSONSchema runs every command with --format json and
// holds each line to it.
const jsonDoc = "../docs/json.md"

// fieldSpec is a documented field: the JSON types it may have ("bytes" is
// a string or {"base64": ...}), whether it may be absent.
type fieldSpec struct {
	types    []string
	optional bool
}

// objectSpec maps the fields of an object type to their specs. A nested
// field is written with its path: "batch.position", "headers[].key";
// "config.*.value" for an object whose names are data.
type objectSpec map[string]fieldSpec

var (
	sectionRe = regexp.MustCompile("^## `([^`]+)`")
	objectRe  = regexp.MustCompile("^### (?:`([^`]+)`|record line)")
	rowRe     = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")
	jsonTypes = []string{"string", "integer", "number", "boolean", "object", "array", "null", "bytes"}
)

// readJSONDoc parses docs/json.md into section -> type -> spec.
func readJSONDoc(t *testing.T) map[string]map[string]objectSpec {
	t.Helper()
	f, err := os.Open(jsonDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := map[string]map[string]objectSpec{}
	var section string
	var obj objectSpec
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := sectionRe.FindStringSubmatch(line); m != nil {
			section, obj = m[1], nil
			doc[section] = map[string]objectSpec{}
			continue
		}
		if m := objectRe.FindStringSubmatch(line); m != nil {
			if section == "" {
				t.Fatalf("%s:%d: an object before any command", jsonDoc, n)
			}
			obj = objectSpec{}
			doc[section][m[1]] = obj
			continue
		}
		m := rowRe.FindStringSubmatch(line)
		if m == nil || obj == nil {
			if strings.HasPrefix(line, "## ") {
				obj = nil
			}
			continue
		}
		var spec fieldSpec
		for _, w := range strings.FieldsFunc(m[2], func(r rune) bool { return r == ',' || r == ' ' || r == '`' }) {
			switch {
			case w == "or":
			case w == "optional":
				spec.optional = true
			case strings.HasPrefix(w, `"`): // the value of "type"
				spec.types = append(spec.types, "string")
			case slices.Contains(jsonTypes, w):
				spec.types = append(spec.types, w)
			default:
				t.Fatalf("%s:%d: %q is not a JSON type", jsonDoc, n, w)
			}
		}
		obj[m[1]] = spec
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// jsonType names the JSON type of v, as encoding/json decodes it with
// UseNumber.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	}
	return "object"
}

// typeAllowed tells whether v fits one of the types.
func typeAllowed(types []string, v any) bool {
	got := jsonType(v)
	for _, w := range types {
		switch {
		case w == got, w == "number" && got == "integer":
			return true
		case w == "bytes":
			if o, ok := v.(map[string]any); got == "string" || ok && len(o) == 1 && jsonType(o["base64"]) == "string" {
				return true
			}
		}
	}
	return false
}

// lookup finds the spec of a path, "*" in the spec standing for any name.
func (o objectSpec) lookup(path []string) (string, fieldSpec, bool) {
	if s, ok := o[strings.Join(path, ".")]; ok {
		return strings.Join(path, "."), s, true
	}
	for name, s := range o {
		parts := strings.Split(name, ".")
		if len(parts) != len(path) {
			continue
		}
		match := true
		for i := range parts {
			if parts[i] != path[i] && parts[i] != "*" {
				match = false
				break
			}
		}
		if match {
			return name, s, true
		}
	}
	return "", fieldSpec{}, false
}

// hasChildren tells whether the spec documents what is inside name.
func (o objectSpec) hasChildren(name string) bool {
	for n := range o {
		if strings.HasPrefix(n, name+".") {
			return true
		}
	}
	return false
}

// check holds an object, at path, to o: every field documented with its
// type, every field that is not optional present.
func (o objectSpec) check(obj map[string]any, path []string, errs *[]string) {
	for k, v := range obj {
		p := append(slices.Clone(path), k)
		name, spec, ok := o.lookup(p)
		if !ok {
			*errs = append(*errs, "undocumented field "+strings.Join(p, "."))
			continue
		}
		if !typeAllowed(spec.types, v) {
			*errs = append(*errs, name+" is "+jsonType(v)+", documented as "+strings.Join(spec.types, " or "))
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			if o.hasChildren(name) && !typeAllowed([]string{"bytes"}, v) {
				o.check(v, p, errs)
			}
		case []any:
			elem := append(slices.Clone(p[:len(p)-1]), p[len(p)-1]+"[]")
			if !o.hasChildren(strings.Join(elem, ".")) {
				continue
			}
			for _, e := range v {
				if e, ok := e.(map[string]any); ok {
					o.check(e, elem, errs)
				}
			}
		}
	}
	// Required members of this object: documented right under path, with
	// no "*" standing for a name.
	prefix := strings.Join(path, ".")
	for name, spec := range o {
		if spec.optional || strings.Contains(name, "*") {
			continue
		}
		rest, ok := strings.CutPrefix(name, prefix)
		if prefix != "" {
			if !ok || !strings.HasPrefix(rest, ".") {
				continue
			}
			rest = rest[1:]
		}
		if strings.Contains(rest, ".") || strings.HasSuffix(rest, "[]") {
			continue
		}
		if _, ok := obj[rest]; !ok {
			*errs = append(*errs, "no "+name)
		}
	}
}

// jsonSection names the section of docs/json.md a command line's output
// is held to: the command's name, "export --format kcat" for kcat lines.
func jsonSection(args []string) string {
	cmd := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--format" || a == "--workers" || a == "--max-record-bytes":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			cmd = a
		}
		if cmd != "" {
			break
		}
	}
	if cmd == "export" {
		for i, a := range args {
			if a == "--format=kcat" || a == "--format" && i+1 < len(args) && args[i+1] == "kcat" {
				return "export --format kcat"
			}
		}
	}
	return cmd
}

// schemaCases are the runs whose JSON is checked: the golden transcripts'
// runs (their text ones with --format json), and a run of every command
// the goldens leave out.
func schemaCases() []goldenCase {
	copyTo := func(t *testing.T, dir string) { testutil.CopyTree(t, sample, filepath.Join(dir, "logs")) }
	cases := []goldenCase{
		{name: "find-offset", args: []string{"find", "--offset", "5", sample + "/orders-0"}},
		{name: "find-timestamp", args: []string{"find", "--timestamp", "2024-01-01T00:05:00Z", sample + "/clicks-v1-0"}},
		{name: "find-record", args: []string{"find", "--offset", "42", "--print-data-log", "--value-decoder", "hex", sample + "/user-profiles-0"}},
		{name: "find-beyond", args: []string{"find", "--offset", "99999", sample + "/orders-0"}},
		{name: "verify", args: []string{"verify", "--verbose", sample}},
		{name: "verify-damaged", setup: damagedOrders, args: []string{"verify", "--deep", "$DIR/logs/orders-0"}},
		{name: "verify-file", args: []string{"verify", sample + "/orders-0/00000000000000000000.log"}},
		{name: "reindex-check", args: []string{"reindex", "--check", sample}},
		{name: "reindex-damaged", setup: damagedOrders, args: []string{"reindex", "--check", "$DIR/logs/orders-0"}},
		{name: "reindex", setup: copyTo, args: []string{"reindex", "$DIR/logs/orders-0"}},
		{name: "upgrade", setup: copyTo, args: []string{"upgrade", "--dry-run", "$DIR/logs"}},
		{name: "upgrade-output", setup: copyTo, args: []string{"upgrade", "--to-magic", "2", "--output", "$DIR/out", "$DIR/logs/legacy.events-v0-0"}},
		{name: "migrate", setup: copyTo, args: []string{"migrate-checkpoints", "$DIR/logs"}},
		{name: "migrate-reverse", setup: copyTo, args: []string{"migrate-checkpoints", "--dry-run", "--reverse", "$DIR/logs"}},
		{name: "compact", setup: copyTo, args: []string{"compact", "--now", "2024-02-01T00:00:00Z", "$DIR/logs"}},
		{name: "retention", setup: copyTo, args: []string{"retention", "--now", "2024-01-02T00:00:00Z", "$DIR/logs"}},
		{name: "export", args: []string{"export", "--encoding", "utf8", "--isolation", "read_uncommitted", sample + "/payments.txn-0"}},
		{name: "export-kcat", args: []string{"export", "--format", "kcat", sample + "/user-profiles-0"}},
		{name: "gen", args: []string{"gen", "--out", "$DIR/gen", "--topics", "2", "--records", "50"}},
	}
	for _, list := range [][]goldenCase{dumpGoldenCases, getoutGoldenCases, grepGoldenCases, repairGoldenCases, replicasGoldenCases} {
		for _, c := range list {
			// kcat lines to a file leave stdout to the summary's table.
			if !slices.Contains(c.args, "kcat") || !slices.Contains(c.args, "-o") || slices.Contains(c.args, "-") {
				cases = append(cases, c)
			}
		}
	}
	for i, c := range cases {
		if !slices.Contains(c.args, "json") && !slices.Contains(c.args, "kcat") {
			cases[i].args = append([]string{"--format", "json"}, c.args...)
		}
	}
	return cases
}

// TestJSONSchema holds every command's JSON output to docs/json.md, so the
// page says what the commands write: each object's type documented for its
// command, each field documented with its type, no documented field that
// is not optional missing, and every command of the page seen.
func TestJSONSchema(t *testing.T) {
	doc := readJSONDoc(t)
	seen := map[string]bool{}
	for _, c := range schemaCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(t, dir)
			}
			args := []string{"logtool", "--no-progress"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "$DIR", dir))
			}
			var stdout, stderr bytes.Buffer
			Run(args, strings.NewReader(""), &stdout, &stderr)
			section := jsonSection(c.args)
			objects, ok := doc[section]
			if !ok {
				t.Fatalf("%s has no section in %s", section, jsonDoc)
			}
			for _, line := range bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				dec := json.NewDecoder(bytes.NewReader(line))
				dec.UseNumber()
				var obj map[string]any
				if err := dec.Decode(&obj); err != nil {
					t.Fatalf("not a JSON object: %v: %s", err, line)
				}
				typ, _ := obj["type"].(string)
				spec, ok := objects[typ]
				if !ok {
					t.Errorf("%s: type %q is not in %s: %s", section, typ, jsonDoc, line)
					continue
				}
				var errs []string
				spec.check(obj, nil, &errs)
				if len(errs) > 0 {
					slices.Sort(errs)
					t.Errorf("%s %q: %s\n%s", section, typ, strings.Join(slices.Compact(errs), "; "), line)
				}
				seen[section] = true
			}
		})
	}
	for section := range doc {
		if !seen[section] {
			t.Errorf("no run checks the JSON of %s", section)
		}
	}
	// A new command comes with its section; these print no JSON.
	for _, cmd := range NewApp().Commands {
		if _, ok := doc[cmd.Name]; !ok && !cmd.Hidden && !slices.Contains([]string{"completion", "man", "help"}, cmd.Name) {
			t.Errorf("%s has no section in %s", cmd.Name, jsonDoc)
		}
	}
}

// TestJSONDocExportBase64: export's record lines write a key, value and
// header value in base64 by default, text or not. The types of json.md
// ("bytes": a string when it is UTF-8) do not say so, so each row's note
// must, or a reader takes "a2V5LTAwMDE0Mg==" for the key itself.
func TestJSONDocExportBase64(t *testing.T) {
	data, err := os.ReadFile(jsonDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, doc, _ := strings.Cut(string(data), "## `export`\n")
	doc, _, _ = strings.Cut(doc, "\n## ")
	notes := map[string]string{}
	for _, line := range strings.Split(doc, "\n") {
		if cells := strings.Split(line, " | "); len(cells) == 3 && rowRe.MatchString(line) {
			notes[strings.Trim(cells[0], "|` ")] = strings.TrimSuffix(cells[2], " |")
		}
	}
	code, out, stderr := runArgs("--no-progress", "--format", "json", "export", "--from-offset", "5", "--to-offset", "5", sample+"/orders-0")
	var rec struct {
		Key, Value string
		Headers    []struct{ Value string }
	}
	if err := json.Unmarshal([]byte(out), &rec); code != ExitOK || err != nil || len(rec.Headers) == 0 {
		t.Fatalf("exit %d, %v, stdout %q, stderr %q", code, err, out, stderr)
	}
	for field, v := range map[string]string{"key": rec.Key, "value": rec.Value, "headers[].value": rec.Headers[0].Value} {
		if _, err := base64.StdEncoding.DecodeString(v); err != nil {
			t.Fatalf("%s %q is not base64: %v", field, v, err)
		}
		note := notes[field]
		if note == "as `value`" {
			note = notes["value"]
		}
		if !strings.Contains(note, "base64") {
			t.Errorf("%s: export's %s row says %q, but export writes it in base64: %q", jsonDoc, field, notes[field], v)
		}
	}
}
