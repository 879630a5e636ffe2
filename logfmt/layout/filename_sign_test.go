package layout

import "testing"

// Kafka's LogFileUtils.offsetFromFileName is Long.parseLong of the name up to
// its first '.', which accepts a leading '+' or '-' and any number of leading
// zeros: "+0000000000000000100.log" and "000000000000000000001.log" are loaded
// as segments 100 and 1 (LogSegment.open then opens or creates the canonical
// 20-digit file, not this one), "-0000000000000000001.log" as segment -1.
// A broker does not ignore them, so they must not pass as "ignored".
func TestBrokerRefusalSignedAndLongOffsetNames(t *testing.T) {
	for _, name := range []string{
		"+0000000000000000100.log",
		"-0000000000000000001.log",
		"000000000000000000001.log",
		"+0000000000000000000.index",
		"-0000000000000000005.swap",
	} {
		if got := BrokerRefusal(name, false, func(string) bool { return true }); got == "" {
			t.Errorf("BrokerRefusal(%q) = \"\" (a broker ignores it), but Long.parseLong parses it and the broker loads it as a segment", name)
		}
	}
}
