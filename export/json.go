package export

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/jsonbytes"
)

// Encoding is how keys, values and header values are written.
type Encoding int

const (
	// Base64 writes every byte string in standard base64, padded.
	Base64 Encoding = iota
	// UTF8 writes a byte string that is valid UTF-8 as a JSON string and
	// any other as {"base64": "..."}, so nothing is lost either way.
	UTF8
)

// Format is the shape of a record's line.
type Format int

const (
	// JSONLines is export's own object: every field a consumer sees.
	JSONLines Format = iota
	// Kcat is the object kcat -J prints, field for field.
	Kcat
)

// ParseFormat parses export's --format names.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "json":
		return JSONLines, nil
	case "kcat":
		return Kcat, nil
	}
	return 0, fmt.Errorf("want json or kcat, got %q", s)
}

// ParseEncoding parses the --encoding names.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "base64":
		return Base64, nil
	case "utf8":
		return UTF8, nil
	}
	return 0, fmt.Errorf("want base64 or utf8, got %q", s)
}

// Encoder appends the JSON line of a record. It writes by hand, with
// strconv and base64 appends, because reflection would cost more than
// reading the log; every field is written whatever its value, in a fixed
// order, so lines differ only where records do.
type Encoder struct {
	kcat   bool
	enc    Encoding
	marks  bool   // read_uncommitted: say what became of transactions
	prefix []byte // {"topic":...,"partition":N,"offset":
}

// NewEncoder returns the encoder of one partition's records. Under
// read_uncommitted each transactional record says what became of its
// transaction ("transaction": committed, aborted or ongoing) and a control
// record says what it is ("control": {"type", "coordinatorEpoch"}), which
// read_committed leaves out.
func NewEncoder(topic string, partition int32, format Format, enc Encoding, iso fetch.Isolation) *Encoder {
	p := append([]byte(`{"topic":`), jsonbytes.AppendString(nil, topic)...)
	p = append(p, `,"partition":`...)
	p = strconv.AppendInt(p, int64(partition), 10)
	p = append(p, `,"offset":`...)
	return &Encoder{kcat: format == Kcat, enc: enc, marks: iso == fetch.ReadUncommitted, prefix: p}
}

// Append appends r's line, newline included, to dst.
func (e *Encoder) Append(dst []byte, r *fetch.Record) []byte {
	if e.kcat {
		return e.appendKcat(dst, r, e.appendBytes, jsonbytes.AppendBytes)
	}
	dst = e.appendHead(dst, r, e.appendBytes)
	dst = e.appendBytes(dst, r.Value)
	return e.appendTail(dst, r, e.appendBytes, jsonbytes.AppendBytes)
}

// AppendStreamed is Append for a large record (largeBytes over chunkSize):
// its key, value, header keys and header values are appended a piece at a
// time, and flush is given dst whenever it holds chunkSize bytes or more,
// to send them on and return the buffer to go on with, so that the line is
// never held whole.
func (e *Encoder) AppendStreamed(dst []byte, r *fetch.Record, flush func([]byte) ([]byte, error)) ([]byte, error) {
	p := pieces{e: e, flush: flush}
	if e.kcat {
		return e.appendKcat(dst, r, p.bytes, p.name), p.err
	}
	dst = e.appendHead(dst, r, p.bytes)
	dst = p.bytes(dst, r.Value)
	dst = e.appendTail(dst, r, p.bytes, p.name)
	return dst, p.err
}

// largeBytes is how many bytes of r's line its key, value and headers
// make, before encoding: what decides that it is streamed.
func largeBytes(r *fetch.Record) int {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// pieces appends a byte string of a streamed line a piece at a time; after
// flush fails it appends nothing more, and err is the failure.
type pieces struct {
	e     *Encoder
	flush func([]byte) ([]byte, error)
	err   error
}

// bytes is appendBytes (a key or value under the encoder's --encoding).
func (p *pieces) bytes(dst, b []byte) []byte { return p.append(dst, b, p.e.enc) }

// name is jsonbytes.AppendBytes (a header key, always under its rule).
func (p *pieces) name(dst, b []byte) []byte { return p.append(dst, b, UTF8) }

func (p *pieces) append(dst, b []byte, enc Encoding) []byte {
	if p.err != nil {
		return dst
	}
	// The form is chosen for the whole of b, as appendBytes does.
	piece, end := jsonbytes.AppendBase64, `"`
	switch {
	case b == nil:
		return append(dst, "null"...)
	case enc == Base64:
		dst = append(dst, '"')
	case utf8.Valid(b):
		dst, piece = append(dst, '"'), jsonbytes.AppendEscaped
	default:
		dst, end = append(dst, `{"base64":"`...), `"}`
	}
	for len(b) > 0 {
		n := min(len(b), streamPiece)
		dst = piece(dst, b[:n])
		b = b[n:]
		if len(dst) >= chunkSize {
			if dst, p.err = p.flush(dst); p.err != nil {
				return dst
			}
		}
	}
	return append(dst, end...)
}

// appendHead appends what comes before a record's value in its line, the
// key by appendBytes.
func (e *Encoder) appendHead(dst []byte, r *fetch.Record, appendBytes func(dst, b []byte) []byte) []byte {
	dst = append(dst, e.prefix...)
	dst = appendInt(dst, r.Offset)
	dst = append(dst, `,"timestamp":`...)
	dst = appendInt(dst, r.Timestamp)
	dst = append(dst, `,"timestampType":"`...)
	dst = append(dst, r.TimestampType.String()...)
	dst = append(dst, `","key":`...)
	dst = appendBytes(dst, r.Key)
	return append(dst, `,"value":`...)
}

// streamPiece is how much of a byte string AppendStreamed appends at a
// time: a multiple of 3, so that base64 pieces join with no padding between
// them (the escapes of UTF-8 text are of single bytes, and cut anywhere).
const streamPiece = 48 << 10

// appendTail appends what follows a record's value in its line, header
// values by appendBytes and header keys by appendName.
func (e *Encoder) appendTail(dst []byte, r *fetch.Record, appendBytes, appendName func(dst, b []byte) []byte) []byte {
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = appendName(dst, h.Key)
		dst = append(dst, `,"value":`...)
		dst = appendBytes(dst, h.Value)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"producerId":`...)
	dst = appendInt(dst, r.ProducerID)
	dst = append(dst, `,"producerEpoch":`...)
	dst = appendInt(dst, int64(r.ProducerEpoch))
	dst = append(dst, `,"sequence":`...)
	dst = appendInt(dst, int64(r.Sequence))
	dst = append(dst, `,"isTransactional":`...)
	dst = strconv.AppendBool(dst, r.Transactional)
	dst = append(dst, `,"leaderEpoch":`...)
	dst = appendInt(dst, int64(r.LeaderEpoch))
	if e.marks && r.Transactional && !r.Control {
		dst = append(dst, `,"transaction":"`...)
		dst = append(dst, r.Txn.String()...)
		dst = append(dst, '"')
	}
	if r.Control {
		dst = append(dst, `,"control":{"type":"`...)
		dst = append(dst, r.ControlType.String()...)
		dst = append(dst, `","coordinatorEpoch":`...)
		dst = appendInt(dst, int64(r.CoordinatorEpoch))
		dst = append(dst, '}')
	}
	return append(dst, "}\n"...)
}

// appendInt is strconv.AppendInt with a shortcut for -1 to 9, the values
// of most producer, sequence and epoch fields.
func appendInt(dst []byte, v int64) []byte {
	switch {
	case v == -1:
		return append(dst, '-', '1')
	case v >= 0 && v <= 9:
		return append(dst, byte('0'+v))
	}
	return strconv.AppendInt(dst, v, 10)
}

func (e *Encoder) appendBytes(dst, b []byte) []byte {
	switch {
	case b == nil:
		return append(dst, "null"...)
	case e.enc == UTF8:
		return jsonbytes.AppendBytes(dst, b)
	}
	dst = append(dst, '"')
	dst = jsonbytes.AppendBase64(dst, b)
	return append(dst, '"')
}
