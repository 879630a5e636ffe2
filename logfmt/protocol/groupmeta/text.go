package groupmeta

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	p "github.com/logtool/logtool/logfmt/protocol"
)

// FormatText renders a __consumer_offsets record as kafka-dump-log.sh 3.7
// prints it (GroupMetadataManager.formatRecordKeyAndValue): offset commits
// as "offset_commit::group=<g>,partition=<topic>-<p>" with
// "offset=<n>[,metadata=<m>]", group metadata as "group_metadata::group=<g>"
// with {"protocolType":...,"protocol":...,"generationId":...,"assignment":
// "{member=[topic-p, ...]}"}, a tombstone as <DELETE>, and the record types
// 3.7 does not know as "unknown::version=<type>" without a value. Members
// are listed as the record holds them, where Kafka lists its hash map's
// order.
func FormatText(key, value []byte, offset int64) p.Formatted {
	skip := func(err error) p.Formatted {
		return p.Formatted{Key: "Error at offset " + strconv.FormatInt(offset, 10) + ", skipping. " + err.Error(), Err: err}
	}
	if len(key) < 2 {
		return skip(fmt.Errorf("key of %d bytes has no record type", len(key)))
	}
	typ := int16(binary.BigEndian.Uint16(key))
	var keyMsg, valueMsg *p.Message
	switch typ {
	case 0, 1:
		keyMsg, valueMsg = offsetCommitKey, offsetCommitValue
	case 2:
		keyMsg, valueMsg = groupMetadataKey, groupMetadataValue
	default:
		return p.Formatted{Key: "unknown::version=" + strconv.Itoa(int(typ))}
	}
	k, _, err := p.Decode(keyMsg, 0, key[2:])
	if err != nil {
		return skip(err)
	}
	var f p.Formatted
	if typ == 2 {
		f.Key = "group_metadata::group=" + string(k.Field("group").Raw)
	} else {
		f.Key = "offset_commit::group=" + string(k.Field("group").Raw) + ",partition=" +
			string(k.Field("topic").Raw) + "-" + strconv.FormatInt(k.Field("partition").Int, 10)
	}
	f.HasValue = true
	if value == nil {
		f.Value = "<DELETE>"
		return f
	}
	if len(value) < 2 {
		return skip(fmt.Errorf("value of %d bytes has no version", len(value)))
	}
	v, _, err := p.Decode(valueMsg, int16(binary.BigEndian.Uint16(value)), value[2:])
	if err != nil {
		return skip(err)
	}
	if typ != 2 {
		f.Value = "offset=" + strconv.FormatInt(v.Field("offset").Int, 10)
		if m := v.Field("metadata").Raw; len(m) > 0 {
			f.Value += ",metadata=" + string(m)
		}
		return f
	}
	if f.Value, err = groupText(v); err != nil {
		return skip(err)
	}
	return f
}

// groupText is Kafka 3.7's summary of a group metadata value, a JSON
// object of four fields in this order.
func groupText(v *p.Value) (string, error) {
	pt := string(v.Field("protocolType").Raw)
	var a strings.Builder
	a.WriteByte('{')
	for i, m := range v.Field("members").Items {
		if i > 0 {
			a.WriteByte(',')
		}
		a.Write(m.Field("memberId").Raw)
		a.WriteByte('=')
		raw := m.Field("assignment").Raw
		if pt != "consumer" {
			a.WriteString(upperHex(raw))
			continue
		}
		if len(raw) < 2 {
			return "", fmt.Errorf("assignment of member %q: %d bytes have no version", m.Field("memberId").Raw, len(raw))
		}
		as, _, err := p.Decode(assignment, int16(binary.BigEndian.Uint16(raw)), raw[2:])
		if err != nil {
			return "", fmt.Errorf("assignment of member %q: %w", m.Field("memberId").Raw, err)
		}
		// Java's List.toString of TopicPartitions.
		a.WriteByte('[')
		n := 0
		for _, t := range as.Field("assignedPartitions").Items {
			for _, id := range t.Field("partitions").Items {
				if n > 0 {
					a.WriteString(", ")
				}
				n++
				a.Write(t.Field("topic").Raw)
				a.WriteByte('-')
				a.WriteString(strconv.FormatInt(id.Int, 10))
			}
		}
		a.WriteByte(']')
		if ud := as.Field("userData"); !ud.Null && len(ud.Raw) > 0 {
			a.WriteByte(':')
			a.WriteString(upperHex(ud.Raw))
		}
	}
	a.WriteByte('}')
	b := append([]byte(`{"protocolType":`), p.AppendString(nil, pt)...)
	b = append(b, `,"protocol":`...)
	if proto := v.Field("protocol"); proto.Null {
		b = append(b, "null"...)
	} else {
		b = p.AppendString(b, string(proto.Raw))
	}
	b = append(b, `,"generationId":`...)
	b = strconv.AppendInt(b, v.Field("generation").Int, 10)
	b = append(b, `,"assignment":`...)
	b = p.AppendString(b, a.String())
	return string(append(b, '}')), nil
}

// upperHex is Kafka's hex of bytes read as an unsigned number: upper case,
// without leading zeros ("0" for zeros), and empty for no bytes.
func upperHex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return strings.ToUpper(new(big.Int).SetBytes(b).Text(16))
}
