package grep

import (
	"path/filepath"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/protocol"
)

// Format says how matches and findings are written.
type Format struct {
	JSON bool
	// KeyDecoder and ValueDecoder show keys and values (header values too)
	// as dump's --key-decoder and --value-decoder do; DecodeNone leaves
	// them out. In text, DecodeString shows the bytes themselves, escaped
	// where they are not printable UTF-8.
	KeyDecoder, ValueDecoder textdec.Decoder
	// Width cuts a key or value in text after this many characters, with
	// "…"; 0 does not cut.
	Width int
}

// header is the text line above the match lines, naming their fields.
func (f Format) header() []byte {
	if f.JSON {
		return nil
	}
	h := "TOPIC PARTITION OFFSET TIMESTAMP STATUS"
	if f.KeyDecoder != textdec.None {
		h += " KEY"
	}
	if f.ValueDecoder != textdec.None {
		h += " VALUE"
	}
	return []byte(h + "\n")
}

// Match is one stored record that matched, as an encoder sees it.
type Match struct {
	Record   *logfmt.Record
	Status   Status
	Txn      fetch.TxnState
	Segment  string // the .log's file name
	Position int64  // byte position of the batch holding the record
}

// encoder writes the lines of one partition.
type encoder struct {
	f     Format
	path  string // the partition directory: "file" in JSON, the name in problem lines
	topic string
	part  int32
	text  []byte // text prefix: "topic partition "
}

func newEncoder(f Format, path, topic string, partition int32) *encoder {
	e := &encoder{f: f, path: path, topic: topic, part: partition}
	e.text = append(append(e.text, topic...), ' ')
	e.text = append(strconv.AppendInt(e.text, int64(partition), 10), ' ')
	return e
}

// match appends the line of a match.
func (e *encoder) match(dst []byte, m *Match) []byte {
	if e.f.JSON {
		return e.matchJSON(dst, m)
	}
	r := m.Record
	dst = append(dst, e.text...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, ' ')
	dst = appendTime(dst, r.Timestamp)
	dst = append(dst, ' ')
	dst = append(dst, m.Status.String()...)
	dst = e.textField(dst, r.Key, e.f.KeyDecoder)
	dst = e.textField(dst, r.Value, e.f.ValueDecoder)
	return append(dst, '\n')
}

func appendTime(dst []byte, ms int64) []byte {
	if ms < 0 {
		return append(dst, '-')
	}
	return append(dst, human.Time(ms)...)
}

func (e *encoder) textField(dst, b []byte, d textdec.Decoder) []byte {
	switch {
	case d == textdec.None:
		return dst
	case b == nil:
		return append(dst, " null"...)
	}
	dst = append(dst, ' ')
	if d == textdec.String {
		return appendPreview(dst, b, e.f.Width)
	}
	start := len(dst)
	dst = d.AppendText(dst, b)
	if w := e.f.Width; w > 0 && len(dst)-start > w {
		dst = append(dst[:start+w], "…"...)
	}
	return dst
}

// appendPreview appends b as one line of text: printable UTF-8 as it is,
// anything else escaped as Go writes it in a string ("\n", "\x00",
// "\u200b"), a backslash doubled; cut after width characters with "…".
func appendPreview(dst, b []byte, width int) []byte {
	n := 0
	for len(b) > 0 {
		if width > 0 && n == width {
			return append(dst, "…"...)
		}
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\x`...)
			dst = append(dst, hexDigits[b[0]>>4], hexDigits[b[0]&0xf])
		case r == '\\':
			dst = append(dst, `\\`...)
		case unicode.IsPrint(r):
			dst = append(dst, b[:size]...)
		default:
			q := strconv.QuoteRune(r) // 'x' with the escape inside
			dst = append(dst, q[1:len(q)-1]...)
		}
		b = b[size:]
		n++
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// head starts an object of type typ about file.
func (e *encoder) head(dst []byte, typ, file string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","file":`...)
	dst = protocol.AppendString(dst, file)
	dst = append(dst, `,"topic":`...)
	dst = protocol.AppendString(dst, e.topic)
	dst = append(dst, `,"partition":`...)
	return strconv.AppendInt(dst, int64(e.part), 10)
}

func appendField(dst []byte, name string, v int64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

func appendStringField(dst []byte, name, v string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return protocol.AppendString(dst, v)
}

func (e *encoder) matchJSON(dst []byte, m *Match) []byte {
	r := m.Record
	dst = e.head(dst, "match", e.path)
	dst = appendField(dst, "offset", r.Offset)
	dst = appendField(dst, "timestamp", r.Timestamp)
	dst = appendStringField(dst, "timestampType", r.TimestampType.String())
	dst = appendStringField(dst, "status", m.Status.String())
	if e.f.KeyDecoder != textdec.None {
		dst = append(dst, `,"key":`...)
		dst = e.f.KeyDecoder.AppendJSON(dst, r.Key)
	}
	if e.f.ValueDecoder != textdec.None {
		dst = append(dst, `,"value":`...)
		dst = e.f.ValueDecoder.AppendJSON(dst, r.Value)
	}
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = protocol.AppendStringBytes(dst, h.Key)
		if e.f.ValueDecoder != textdec.None {
			dst = append(dst, `,"value":`...)
			dst = e.f.ValueDecoder.AppendJSON(dst, h.Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = appendStringField(dst, "segment", m.Segment)
	dst = appendField(dst, "position", m.Position)
	if m.Txn != fetch.NotTransactional {
		dst = appendStringField(dst, "transaction", m.Txn.String())
	}
	return append(dst, "}\n"...)
}

// finding appends the line of a finding.
func (e *encoder) finding(dst []byte, f *Finding) []byte {
	if e.f.JSON {
		dst = e.head(dst, "problem", filepath.Join(e.path, f.Segment))
		dst = appendField(dst, "offset", f.Offset)
		dst = appendStringField(dst, "status", f.Status.String())
		if f.By >= 0 {
			dst = appendField(dst, "supersededBy", f.By)
		}
		dst = appendField(dst, "written", f.Written)
		dst = appendField(dst, "deadline", f.Deadline)
		dst = appendField(dst, "pastDeadlineMs", f.Past)
		dst = appendField(dst, "count", f.Count)
		dst = appendStringField(dst, "segment", f.Segment)
		dst = appendField(dst, "position", f.Position)
		dst = appendStringField(dst, "message", f.Message())
		return append(dst, "}\n"...)
	}
	dst = append(dst, "problem: "...)
	dst = append(dst, filepath.Join(e.path, f.Segment)...)
	dst = append(dst, ": "...)
	dst = append(dst, f.Message()...)
	dst = append(dst, " (at byte "...)
	dst = strconv.AppendInt(dst, f.Position, 10)
	return append(dst, ")\n"...)
}
