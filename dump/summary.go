package dump

import (
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/protocol"
)

// row is one line of the summary: a partition, or a file given by itself.
type row struct {
	name      string
	file      bool   // a file given by itself, named by its path in the table
	topic     string // the partition of the row, or of the file's directory
	partition int32  // -1 when the file is not in a partition directory
	policy    string // the topic's cleanup.policy; "" when not known
	segments  int64
	bytes     int64
	batches   int64
	records   int64
	magics    uint8 // bit per magic
	codecs    uint8 // bit per codec id
	first     int64 // offsets; -1 until a batch is seen
	last      int64
	firstTs   int64 // timestamps; noTs until a batch with one is seen
	lastTs    int64
	problems  int
}

const noTs = -1 << 63

func newRow(name string) *row {
	return &row{name: name, partition: -1, first: -1, last: -1, firstTs: noTs, lastTs: noTs}
}

// addBatch accounts for one valid-framed batch. A legacy entry's first
// offset and record count are legacyRecords'; an unreadable wrapper's
// unknown count (-1) counts as one entry.
func (r *row) addBatch(b *logfmt.Batch, first, count int64) {
	r.batches++
	r.magics |= 1 << uint(b.Magic()&7)
	r.codecs |= 1 << uint(b.Compression()&7)
	firstTs := b.MaxTimestamp()
	if b.Magic() >= 2 {
		h := b.Header()
		first, count = b.EntryOffset(), int64(max(h.RecordCount(), 0))
		// Under LogAppendTime every record's timestamp is the batch's
		// maximum; the base timestamp is the producer's and shows nowhere.
		if !h.HasDeleteHorizon() && h.BaseTimestamp() >= 0 && b.TimestampType() == logfmt.CreateTime {
			firstTs = h.BaseTimestamp()
		}
	} else if count < 0 {
		count = 1
	}
	r.records += count
	if r.first < 0 {
		r.first = first
	}
	r.last = max(r.last, b.LastOffset())
	if firstTs >= 0 && (r.firstTs == noTs || firstTs < r.firstTs) {
		r.firstTs = firstTs
	}
	if ts := b.MaxTimestamp(); ts >= 0 {
		r.lastTs = max(r.lastTs, ts)
	}
}

func setNames[T ~int8](mask uint8, name func(T) string) []string {
	var out []string
	for mask != 0 {
		i := bits.TrailingZeros8(mask)
		out = append(out, name(T(i)))
		mask &^= 1 << i
	}
	return out
}

func (r *row) magicNames() []string {
	return setNames(r.magics, func(m int8) string { return strconv.Itoa(int(m)) })
}

func (r *row) codecNames() []string {
	return setNames(r.codecs, func(c codec.Type) string { return c.String() })
}

// summaryJSON appends a "summary" object.
func (d *dumper) summaryJSON(r *row) {
	l := append(d.s.buf(), `{"type":"summary","file":`...)
	l = protocol.AppendString(l, r.name)
	if r.partition >= 0 {
		l = append(l, `,"topic":`...)
		l = protocol.AppendString(l, r.topic)
		l = appendIntField(l, "partition", int64(r.partition))
	}
	if r.policy != "" {
		l = append(l, `,"cleanupPolicy":`...)
		l = protocol.AppendString(l, r.policy)
	}
	l = appendIntField(l, "segments", r.segments)
	l = appendIntField(l, "bytes", r.bytes)
	l = appendIntField(l, "batches", r.batches)
	l = appendIntField(l, "records", r.records)
	l = append(l, `,"magics":[`...)
	l = append(l, strings.Join(r.magicNames(), ",")...)
	l = append(l, `],"codecs":[`...)
	for i, c := range r.codecNames() {
		if i > 0 {
			l = append(l, ',')
		}
		l = protocol.AppendString(l, c)
	}
	l = append(l, ']')
	for _, f := range []struct {
		name string
		v    int64
		ok   bool
	}{
		{"firstOffset", r.first, r.first >= 0},
		{"lastOffset", r.last, r.last >= 0},
		{"firstTimestamp", r.firstTs, r.firstTs != noTs},
		{"lastTimestamp", r.lastTs, r.lastTs != noTs},
	} {
		l = append(l, ',', '"')
		l = append(l, f.name...)
		l = append(l, '"', ':')
		l = appendNullable(l, f.v, f.ok)
	}
	l = appendIntField(l, "problems", int64(r.problems))
	d.s.set(append(l, "}\n"...))
}

// writeTable prints the summary rows as a table, with a total row when
// there is more than one row, and a POLICY column when the cleanup policy
// of some topic is known. Unless wide, the columns a reader can do without
// are left out, so that the table fits a 120-column terminal.
func writeTable(w io.Writer, rows []*row, wide bool) error {
	label := "PARTITION"
	policies := false
	for _, r := range rows {
		if r.file || r.partition < 0 {
			label = "FILE"
		}
		policies = policies || r.policy != ""
	}
	header := []string{label, "SEGMENTS", "SIZE", "BATCHES", "RECORDS", "MAGIC", "CODECS",
		"FIRST OFFSET", "LAST OFFSET", "FIRST TIMESTAMP", "LAST TIMESTAMP", "PROBLEMS"}
	if policies {
		header = slices.Insert(header, 1, "POLICY")
	}
	t := table.New(header...)
	add := func(c []string, policy string) {
		if policies {
			c = slices.Insert(c, 1, policy)
		}
		t.Append(c...)
	}
	var total row
	total.first = -1
	for _, r := range rows {
		name := r.name
		if !r.file && r.partition >= 0 {
			name = r.topic + "-" + strconv.Itoa(int(r.partition))
		}
		policy := r.policy
		if policy == "" {
			policy = "-"
		}
		if !wide && !r.file {
			// A file is named by the path the user gave: kept whole.
			name = shorten(name, maxNameWidth)
		}
		add(cells(name, r), policy)
		total.segments += r.segments
		total.bytes += r.bytes
		total.batches += r.batches
		total.records += r.records
		total.magics |= r.magics
		total.codecs |= r.codecs
		total.problems += r.problems
	}
	if len(rows) > 1 {
		// Offsets and times of different partitions do not add up.
		c := cells("TOTAL", &total)
		for i := 7; i <= 10; i++ {
			c[i] = ""
		}
		add(c, "")
	}
	if !wide {
		t.Drop("SEGMENTS", "BATCHES", "MAGIC", "CODECS", "FIRST TIMESTAMP")
	}
	_, err := t.WriteTo(w)
	return err
}

// maxNameWidth is the widest partition or file name of a narrow table: the
// other columns take about 90 of a terminal's 120.
const maxNameWidth = 30

// shorten cuts a name longer than n characters in its middle, keeping its
// start and its end (a partition's number, a segment's base offset).
func shorten(name string, n int) string {
	r := []rune(name)
	if len(r) <= n {
		return name
	}
	tail := n / 2
	return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
}

func cells(name string, r *row) []string {
	off := func(v int64) string {
		if v < 0 {
			return "-"
		}
		return strconv.FormatInt(v, 10)
	}
	ts := func(v int64) string {
		if v == noTs {
			return "-"
		}
		return human.Time(v)
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ",")
	}
	return []string{
		name,
		strconv.FormatInt(r.segments, 10),
		human.Bytes(r.bytes),
		strconv.FormatInt(r.batches, 10),
		strconv.FormatInt(r.records, 10),
		list(r.magicNames()),
		list(r.codecNames()),
		off(r.first),
		off(r.last),
		ts(r.firstTs),
		ts(r.lastTs),
		strconv.Itoa(r.problems),
	}
}
