package commands

import (
	"strings"
	"testing"
)

// TestDumpKafkaSpellings: kafka-dump-log.sh's command lines give the same
// output as logtool's own spellings.
func TestDumpKafkaSpellings(t *testing.T) {
	seg := sample + "/payments.txn-0/00000000000000000000.log"
	idx := sample + "/orders-0/00000000000000000712.index"
	tix := sample + "/orders-0/00000000000000000712.timeindex"
	for _, tc := range []struct{ kafka, ours []string }{
		{[]string{"dump", "--files", seg + "," + idx, "--files", tix}, []string{"dump", seg, idx, tix}},
		{[]string{"dump", "--files", idx + "," + tix, "--verify-index-only"}, []string{"dump", "--verify-index-only", idx, tix}},
		{[]string{"dump", "--files", idx, "--index-sanity-check"}, []string{"dump", "--index-sanity-check", idx}},
		{[]string{"dump", "--deep-iteration", "--max-message-size", "1048576", "--files", seg}, []string{"dump", "--deep-iteration", "--max-message-size", "1MiB", seg}},
		{[]string{"dump", "--max-bytes", "2000", "--key-decoder-class", "kafka.serializer.StringDecoder", "--files", seg},
			[]string{"dump", "--max-bytes", "2000", "--print-data-log", seg}},
		{[]string{"dump", "--max-bytes", "2000", "--skip-record-metadata", "--value-decoder-class", "org.apache.kafka.tools.api.DefaultDecoder", "--files", seg},
			[]string{"dump", "--max-bytes", "2000", "--skip-record-metadata", "--value-decoder", "hex", seg}},
		{[]string{"--format", "json", "dump", "--print-data-log", "--max-bytes", "1000", "--files", seg}, []string{"--format", "json", "dump", "--print-data-log", "--max-bytes", "1000", seg}},
	} {
		kc, kout, kerr := runArgs(tc.kafka...)
		oc, oout, oerr := runArgs(tc.ours...)
		if kc != oc || kout != oout || kerr != oerr || kout == "" {
			t.Errorf("%q: exit %d, differs from %q (exit %d):\n%s%s\n---\n%s%s", tc.kafka, kc, tc.ours, oc, kout, kerr, oout, oerr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dump", "--key-decoder-class", "kafka.serializer.LongDecoder", seg}, "logtool: dump: --key-decoder-class: kafka.serializer.LongDecoder: logtool has no integer decoders"},
		{[]string{"dump", "--value-decoder-class", "com.example.AvroDecoder", seg}, `logtool: dump: --value-decoder-class: unknown decoder class "com.example.AvroDecoder"`},
		{[]string{"dump", "--key-decoder", "hex", "--key-decoder-class", "kafka.serializer.StringDecoder", seg}, "logtool: dump: --key-decoder and --key-decoder-class name the same thing"},
		{[]string{"dump", "--files", sample + "/no-such-file"}, "no-such-file: no such file or directory"},
	} {
		code, _, stderr := runArgs(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
