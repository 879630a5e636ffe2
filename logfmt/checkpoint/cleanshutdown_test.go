package checkpoint

import (
	"os"
	"strings"
	"testing"
)

func TestReadCleanShutdown(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CleanShutdown
		err  string
	}{
		{in: "", want: CleanShutdown{Empty: true}},
		{in: `{"version":0,"brokerEpoch":53326}`, want: CleanShutdown{BrokerEpoch: 53326}},
		{in: ` {"brokerEpoch":-1,"other":"x"}` + "\n", want: CleanShutdown{BrokerEpoch: -1}},
		{in: `{"version":1,"brokerEpoch":7}`, want: CleanShutdown{Version: 1, BrokerEpoch: 7}},
		{in: "\n", err: "empty, want a JSON object"},
		{in: `{"version":0}`, err: `no "brokerEpoch" field`},
		{in: `{"brokerEpoch":"7"}`, err: `field "brokerEpoch" is "\"7\"", want an int64`},
		{in: `{"brokerEpoch":7,"version":2147483648}`, err: `field "version"`},
		{in: `{"brokerEpoch":7} x`, err: "malformed JSON"},
		{in: `{"brokerEpoch":`, err: "malformed JSON"},
		{in: "version: 0\nbrokerEpoch: 7", err: "not a JSON object"},
	} {
		got, err := ReadCleanShutdown([]byte(tc.in), "m")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

// The markers in the samples: Kafka 2.x's is empty, the 2024 KRaft broker's
// holds its epoch.
func TestSampleCleanShutdown(t *testing.T) {
	found := sampleFiles(t, ".kafka_cleanshutdown")
	if len(found[".kafka_cleanshutdown"]) != 2 {
		t.Fatalf("want the two markers of the samples, found %v", found)
	}
	for _, path := range found[".kafka_cleanshutdown"] {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ReadCleanShutdown(b, path)
		want := CleanShutdown{Empty: true}
		if strings.Contains(path, "kraft-ksqldb") {
			want = CleanShutdown{BrokerEpoch: 53326}
		}
		if err != nil || c != want {
			t.Errorf("%s: %+v %v, want %+v", path, c, err, want)
		}
	}
}
