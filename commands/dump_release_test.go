package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
)

// TestDumpReleaseGolden pins the lines of each Kafka release line on the
// same files: where kafka-dump-log.sh 3.7, 3.9 and 4.1 differ
// (coordinator decoders, LeaderChange) and where they agree but the Java
// port after 4.2 does not (gap order, the brace after a legacy crc, the
// payload of a keyless record without metadata).
func TestDumpReleaseGolden(t *testing.T) {
	var cases []goldenCase
	for _, v := range []string{"3.7", "3.9", "4.1"} {
		cases = append(cases,
			goldenCase{name: "kafka-" + v + "-offsets", setup: releaseFixture, args: []string{"dump", "--kafka-version", v, "--offsets-decoder",
				"$DIR/__consumer_offsets-40/00000000000000000000.log", "$DIR/__consumer_offsets-0/00000000000000000000.log"}},
			goldenCase{name: "kafka-" + v + "-transactions", setup: releaseFixture, args: []string{"dump", "--kafka-version", v, "--transaction-log-decoder",
				"$DIR/__transaction_state-44/00000000000000000000.log", "$DIR/__transaction_state-0/00000000000000000000.log"}},
			goldenCase{name: "kafka-" + v + "-records", setup: releaseFixture, args: []string{"dump", "--kafka-version", v, "--deep-iteration",
				"$DIR/__cluster_metadata-0/00000000000000000000.log", "$DIR/t-0/00000000000000000000.log", "$DIR/t-0/00000000000000000100.log"}},
			goldenCase{name: "kafka-" + v + "-skip-record-metadata", setup: releaseFixture, args: []string{"dump", "--kafka-version", v,
				"--print-data-log", "--skip-record-metadata", "$DIR/t-0/00000000000000000100.log"}},
		)
	}
	cases = append(cases,
		goldenCase{name: "print-headers", setup: releaseFixture, args: []string{"dump", "--print-headers", "$DIR/t-0/00000000000000000100.log"}},
		goldenCase{name: "kafka-version-unknown", args: []string{"dump", "--kafka-version", "3.6", sample}},
		// JSON objects are logtool's own: no release changes them.
		goldenCase{name: "kafka-3.7-json", setup: releaseFixture, args: []string{"--format", "json", "dump", "--kafka-version", "3.7", "--transaction-log-decoder",
			"$DIR/__transaction_state-0/00000000000000000000.log"}},
	)
	runGolden(t, "dump", cases)
}

// releaseFixture writes the files of TestDumpReleaseGolden: coordinator
// logs built by hand and the first batches of real brokers' ones (a Kafka
// 0.10.1 __consumer_offsets, a 2024 KRaft broker's __transaction_state, the
// LEADER_CHANGE batch a Kafka 3.7.0 controller wrote first), legacy
// messages of the sample, and v2 batches with gaps between them, keyless
// records and headers.
func releaseFixture(t *testing.T, dir string) {
	logdirs := kafkasamples.Need(t, "logdirs")
	offsetsFixture(t, dir)
	txnLogFixture(t, dir)
	real := func(from, to string, batches int) {
		b, err := os.ReadFile(filepath.Join(logdirs, from))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, to, headBatches(b, batches))
	}
	real("xpxwo100_kafka-0.10.1.0-magic1/__consumer_offsets-40/00000000000000000000.log", "__consumer_offsets-40/00000000000000000000.log", 3)
	real("itumelengmogase_kraft-ksqldb-txn/__transaction_state-44/00000000000000000000.log", "__transaction_state-44/00000000000000000000.log", 4)
	real("ldi-poc_kafka-3.7.0-kraft/__cluster_metadata-0/00000000000000000000.log", "__cluster_metadata-0/00000000000000000000.log", 1)
	write(t, dir, "t-0/00000000000000000000.log", headBatches(readSample(t, "legacy.events-v0-0/00000000000000000000.log"), 2))
	hdr := []logfmt.Header{{Key: []byte("trace-id"), Value: []byte("a1")}, {Key: []byte("source"), Value: []byte("gen")}}
	segment(t, dir, "t-0/00000000000000000100.log",
		batch(t, logfmt.DefaultBatchOptions(100), logfmt.Record{Key: []byte("k-100"), Value: []byte("v-100")}, logfmt.Record{Value: []byte("v-101")}),
		batch(t, logfmt.DefaultBatchOptions(105), logfmt.Record{Value: []byte("v-105"), Headers: hdr}, logfmt.Record{Key: []byte("k-106")}),
		batch(t, logfmt.DefaultBatchOptions(110), logfmt.Record{Key: []byte("k-110"), Value: []byte("v-110"), Headers: hdr}))
}

// headBatches returns the first n batches of a segment.
func headBatches(seg []byte, n int) []byte {
	sr := logfmt.NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "")
	end := 0
	for i := 0; i < n && sr.Next(); i++ {
		end = int(sr.Pos())
	}
	return seg[:end]
}
