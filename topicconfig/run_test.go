package topicconfig

import (
	"strings"
	"testing"
)

// TestConfigReportPerBroker: a topic that the brokers of a run's log dirs
// configure differently is listed once per configuration, with the log dir
// it was found in.
func TestConfigReportPerBroker(t *testing.T) {
	cat, err := Load(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cat.For("/a").Topic("t")
	b, _ := cat.For("/b").Topic("t")
	for i, v := range b.Values {
		if v.Name == RetentionMs {
			b.Values[i] = Value{Name: v.Name, Value: "1000", Source: DynamicBroker}
		}
	}
	cr := (&Run{Catalog: cat}).NewReport([]string{CleanupPolicy, RetentionMs, RetentionBytes, RemoteStorageEnable})
	cr.Add("/a", a, true)
	cr.Add("/a", a, true)
	cr.Add("/b", b, true)
	var w strings.Builder
	if err := cr.WriteText(&w); err != nil {
		t.Fatal(err)
	}
	want := "TOPIC   CONFIG        VALUE      SOURCE\n" +
		"t (/b)  retention.ms  1000 (1s)  DYNAMIC_BROKER_CONFIG\n"
	if !strings.Contains(w.String(), want) {
		t.Errorf("got\n%s\nwant\n%s", w.String(), want)
	}
}
