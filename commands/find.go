package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/index/lookup"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/target"
)

func findCommand() *cli.Command {
	return &cli.Command{
		Name:      "find",
		Category:  "inspect",
		Usage:     "look up an offset or a timestamp in a partition the way a broker does",
		ArgsUsage: "(--offset OFFSET | --timestamp TIME) PARTITION_DIR",
		Description: "By offset, as a fetch does: the segment with the greatest base offset not above N, the greatest .index\n" +
			"entry not above N, then a forward scan to the batch holding N (or the first offset after it, when\n" +
			"compaction removed N). By timestamp, as ListOffsets does: the first segment whose largest timestamp\n" +
			"reaches the target, the .timeindex entry below it, the .index entry for that offset, then a scan to the\n" +
			"first record at or after the target. Prints the segment, the index entries used, the byte position, the\n" +
			"batch holding the answer and the answer; --print-data-log (or a decoder flag) adds the record's key, value\n" +
			"and headers, decoded as dump decodes them (in JSON a \"record\" object, bytes kept exactly). When an index is missing or inconsistent (entries no broker\n" +
			"writes, an entry that points at no batch that could hold it) find scans from the segment's first byte\n" +
			"instead and says so.\n\n" +
			"Examples:\n" +
			"  logtool find --offset 1000 testdata/kafka-logs/orders-0\n" +
			"  logtool find --timestamp 2024-01-01T00:10:00Z testdata/kafka-logs/payments.txn-0\n" +
			"  logtool find --offset 42 --print-data-log --value-decoder hex testdata/kafka-logs/user-profiles-0\n" +
			"  logtool --format json find --timestamp 1704067800000 testdata/kafka-logs/clicks-v1-0",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "offset", Usage: "the offset to find, N >= 0 (give this or --timestamp)"},
			&cli.StringFlag{Name: "timestamp", Usage: "the timestamp to find, milliseconds since the epoch or RFC 3339 (give this or --offset)"},
			&cli.BoolFlag{Name: "print-data-log", Usage: "print the record found: key, value and headers"},
		}, decoderFlags()...),
		Action: runFind,
	}
}

func runFind(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	off, ts := c.String("offset"), c.String("timestamp")
	if (off == "") == (ts == "") {
		return usageErr("give exactly one of --offset and --timestamp")
	}
	if c.NArg() != 1 {
		return usageErr("want one PARTITION_DIR, got %d argument(s)", c.NArg())
	}
	var rd recordDecoders
	if rd.key, rd.value, err = decoders(c); err != nil {
		return err
	}
	rd.print = c.Bool("print-data-log") || slices.ContainsFunc(decoderFlags(), func(f cli.Flag) bool { return c.IsSet(f.Names()[0]) })
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "find", Takes: target.Partitions}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	dir := set.Partitions()[0].Path
	var res *lookup.Result
	if off != "" {
		n, perr := strconv.ParseInt(off, 10, 64)
		if perr != nil || n < 0 {
			return usageErr("--offset: want an offset >= 0, got %q", off)
		}
		res, err = lookup.Offset(dir, n, lookup.Options{MaxRecordBytes: g.MaxRecordBytes})
	} else {
		// err must stay the outer one: a shadowed err lost lookup's corruption error (exit 0 on damage).
		ms, terr := timeArg("timestamp", ts, 0)
		if terr != nil {
			return terr
		}
		res, err = lookup.Timestamp(dir, ms, lookup.Options{MaxRecordBytes: g.MaxRecordBytes})
	}
	if err != nil {
		return err
	}
	if g.JSON() {
		err = json.NewEncoder(g.Stdout).Encode(findJSON(res, rd))
	} else {
		_, err = fmt.Fprint(g.Stdout, findText(res, rd))
	}
	if err == nil && res.Damaged > 0 {
		// The answer holds, found around the damage its fallbacks name.
		return problemsErr(res.Damaged)
	}
	return err
}

// findTime prints a timestamp as milliseconds and, when it is one, UTC.
func findTime(ms int64) string {
	if ms < 0 {
		return strconv.FormatInt(ms, 10) + " (none)"
	}
	return fmt.Sprintf("%d (%s)", ms, human.Time(ms))
}

// recordDecoders say whether and how find prints the record it found.
type recordDecoders struct {
	print      bool
	key, value dump.Decoder
}

func findText(r *lookup.Result, rd recordDecoders) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-10s %s\n", label, fmt.Sprintf(format, args...))
	}
	if r.ByTimestamp {
		line("target", "timestamp %s", findTime(r.Target))
	} else {
		line("target", "offset %d", r.Target)
	}
	for _, f := range r.Fallbacks {
		line("fallback", "%s", f)
	}
	if !r.Found {
		line("answer", "none: %s", r.Reason)
		return b.String()
	}
	line("segment", "%s (base offset %d)", r.Segment, r.Base)
	if r.TimeEntry != nil {
		line("timeindex", "entry: timestamp %s at offset %d", findTime(r.TimeEntry.Timestamp), r.TimeEntry.Offset)
	}
	if r.IndexEntry != nil {
		line("index", "entry: offset %d at byte %d", r.IndexEntry.Offset, r.IndexEntry.Position)
	} else {
		line("index", "no entry used")
	}
	// Each size says what it measures: the bytes the scan read, then the
	// one batch holding the answer.
	line("scan", "from byte %d to byte %d: read %d batch(es), %s in all", r.Start, r.Start+r.ScannedBytes, r.Scanned, human.Bytes(r.ScannedBytes))
	bt := r.Batch
	desc := fmt.Sprintf("at byte %d, size %s: offsets %d to %d (%d record(s)), magic %d, %s, %s, max timestamp %s",
		bt.Position, human.Bytes(int64(bt.Size)), bt.BaseOffset, bt.LastOffset, bt.Records, bt.Magic, bt.Compression, bt.TimestampType, findTime(bt.MaxTimestamp))
	if bt.Magic >= 2 {
		desc += fmt.Sprintf(", leader epoch %d, producer %d epoch %d sequence %d", bt.LeaderEpoch, bt.ProducerID, bt.ProducerEpoch, bt.BaseSequence)
		if bt.Transactional {
			desc += ", transactional"
		}
		if bt.Control {
			desc += ", control"
		}
	}
	line("batch", "%s", desc)
	line("answer", "offset %d, timestamp %s", r.Offset, findTime(r.Timestamp))
	if rd.print {
		text := func(d dump.Decoder, v []byte) string {
			if v == nil {
				return "null"
			}
			return string(d.AppendText(nil, v))
		}
		if rd.key != dump.DecodeNone {
			line("key", "%s", text(rd.key, r.Key))
		}
		if rd.value != dump.DecodeNone {
			line("value", "%s", text(rd.value, r.Value))
			hs := "none"
			for i, h := range r.Headers {
				if i == 0 {
					hs = ""
				} else {
					hs += ", "
				}
				hs += text(dump.DecodeString, h.Key) + "=" + text(rd.value, h.Value)
			}
			line("headers", "%s", hs)
		}
	}
	return b.String()
}

// recordJSON is the record found as a JSON object: key, value (each left
// out when its decoder is none) and headers, bytes kept as jsonbytes does.
func recordJSON(r *lookup.Result, rd recordDecoders) json.RawMessage {
	b := []byte("{")
	if rd.key != dump.DecodeNone {
		b = rd.key.AppendJSON(append(b, `"key":`...), r.Key)
		b = append(b, ',')
	}
	if rd.value != dump.DecodeNone {
		b = rd.value.AppendJSON(append(b, `"value":`...), r.Value)
		b = append(b, `,"headers":[`...)
		for i, h := range r.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonbytes.AppendBytes(append(b, `{"key":`...), h.Key)
			b = rd.value.AppendJSON(append(b, `,"value":`...), h.Value)
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	return append(bytes.TrimSuffix(b, []byte(",")), '}')
}

func findJSON(r *lookup.Result, rd recordDecoders) any {
	type entry struct {
		Offset    int64  `json:"offset"`
		Position  *int32 `json:"position,omitempty"`
		Timestamp *int64 `json:"timestamp,omitempty"`
	}
	type batch struct {
		Position             int64  `json:"position"`
		Size                 int    `json:"size"`
		BaseOffset           int64  `json:"baseOffset"`
		LastOffset           int64  `json:"lastOffset"`
		Count                int    `json:"count"`
		Magic                int8   `json:"magic"`
		Compression          string `json:"compression"`
		TimestampType        string `json:"timestampType"`
		MaxTimestamp         int64  `json:"maxTimestamp"`
		PartitionLeaderEpoch *int32 `json:"partitionLeaderEpoch,omitempty"`
		ProducerID           *int64 `json:"producerId,omitempty"`
		ProducerEpoch        *int16 `json:"producerEpoch,omitempty"`
		BaseSequence         *int32 `json:"baseSequence,omitempty"`
		IsTransactional      *bool  `json:"isTransactional,omitempty"`
		IsControl            *bool  `json:"isControl,omitempty"`
	}
	type result struct {
		Type string         `json:"type"`
		File jsonbytes.Text `json:"file"`
		Dir  jsonbytes.Text `json:"dir"`
		partJSON
		By           string          `json:"by"`
		Target       int64           `json:"target"`
		Found        bool            `json:"found"`
		Reason       string          `json:"reason,omitempty"`
		BaseOffset   *int64          `json:"baseOffset,omitempty"`
		IndexEntry   *entry          `json:"indexEntry"`
		TimeEntry    *entry          `json:"timeIndexEntry"`
		Start        int64           `json:"scanStart"`
		Scanned      int             `json:"scannedBatches"`
		ScannedBytes int64           `json:"scannedBytes"`
		Fallbacks    []string        `json:"fallbacks"`
		Batch        *batch          `json:"batch"`
		Offset       *int64          `json:"offset"`
		Timestamp    *int64          `json:"timestamp"`
		Record       json.RawMessage `json:"record,omitempty"`
	}
	out := result{Type: "find", File: jsonbytes.Text(r.Segment), Dir: jsonbytes.Text(r.Dir), partJSON: partOf(r.Dir), By: "offset", Target: r.Target, Found: r.Found,
		Reason: r.Reason, Start: r.Start, Scanned: r.Scanned, ScannedBytes: r.ScannedBytes, Fallbacks: r.Fallbacks}
	if out.Fallbacks == nil {
		out.Fallbacks = []string{}
	}
	if r.ByTimestamp {
		out.By = "timestamp"
	}
	if out.File == "" {
		out.File = jsonbytes.Text(r.Dir)
	}
	if r.IndexEntry != nil {
		out.IndexEntry = &entry{Offset: r.IndexEntry.Offset, Position: &r.IndexEntry.Position}
	}
	if r.TimeEntry != nil {
		out.TimeEntry = &entry{Offset: r.TimeEntry.Offset, Timestamp: &r.TimeEntry.Timestamp}
	}
	if r.Found {
		bt := r.Batch
		b := &batch{Position: bt.Position, Size: bt.Size, BaseOffset: bt.BaseOffset, LastOffset: bt.LastOffset, Count: bt.Records,
			Magic: bt.Magic, Compression: bt.Compression.String(), TimestampType: bt.TimestampType.String(), MaxTimestamp: bt.MaxTimestamp}
		if bt.Magic >= 2 {
			b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence = &bt.LeaderEpoch, &bt.ProducerID, &bt.ProducerEpoch, &bt.BaseSequence
			b.IsTransactional, b.IsControl = &bt.Transactional, &bt.Control
		}
		out.Batch, out.BaseOffset, out.Offset, out.Timestamp = b, &r.Base, &r.Offset, &r.Timestamp
		if rd.print {
			out.Record = recordJSON(r, rd)
		}
	}
	return out
}
