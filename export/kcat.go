package export

import (
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/logfmt"
)

// appendKcat appends r as kcat -J prints a consumed message (kcat's
// json.c): topic, partition, offset, then tstype ("create" or
// "logappend") and ts unless the record has no timestamp (magic 0), broker
// (-1: no broker served it), headers as a flat [name, value, ...] list only
// when there are some, key and payload, null when null. A consumer never
// sees a control record, so neither does this line. Where kcat would write
// bytes that are not UTF-8 into a string, making the line invalid JSON,
// the Encoding's rule applies: {"base64": ...} under utf8.
func (e *Encoder) appendKcat(dst []byte, r *fetch.Record, appendBytes, appendName func(dst, b []byte) []byte) []byte {
	if r.Control {
		return dst
	}
	dst = append(dst, e.prefix...)
	dst = appendInt(dst, r.Offset)
	switch r.TimestampType {
	case logfmt.CreateTime:
		dst = append(dst, `,"tstype":"create","ts":`...)
		dst = appendInt(dst, r.Timestamp)
	case logfmt.LogAppendTime:
		dst = append(dst, `,"tstype":"logappend","ts":`...)
		dst = appendInt(dst, r.Timestamp)
	}
	dst = append(dst, `,"broker":-1`...)
	if len(r.Headers) > 0 {
		dst = append(dst, `,"headers":[`...)
		for i, h := range r.Headers {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendName(dst, h.Key)
			dst = append(dst, ',')
			dst = appendBytes(dst, h.Value)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"key":`...)
	dst = appendBytes(dst, r.Key)
	dst = append(dst, `,"payload":`...)
	dst = appendBytes(dst, r.Value)
	return append(dst, "}\n"...)
}
