package topicconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
)

var samples = kafkasamples.Dir("logdirs")

func sampleDirs(t *testing.T, names ...string) []string {
	t.Helper()
	if _, err := os.Stat(samples); err != nil {
		kafkasamples.Skip(t, err)
	}
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, filepath.Join(samples, n))
	}
	return dirs
}

// The configuration real brokers stored for their topics, resolved.
func TestSamples(t *testing.T) {
	dirs := sampleDirs(t, "yashasvi960_kafka-4.1-kraft-streams-config", "itumelengmogase_kraft-ksqldb-txn", "volodymyrzee_kafka-2.x-zk")
	c, err := Load(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	streams, ksql, zk := c.For(dirs[0]), c.For(dirs[1]), c.For(dirs[2])
	if !streams.Known() || streams.BrokerID() != 1 || !ksql.Known() || zk.Known() || zk.BrokerID() != 0 {
		t.Fatalf("sources: %s / %s / %s", streams.Describe(), ksql.Describe(), zk.Describe())
	}
	for _, tc := range []struct {
		r               *Resolver
		topic           string
		compact, delete bool
		config, value   string
		source          Source
	}{
		{streams, "telemetry-streams-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog", true, true, "retention.ms", "86430000", DynamicTopic},
		{streams, "__consumer_offsets", true, false, "segment.bytes", "104857600", DynamicTopic},
		{streams, "__consumer_offsets", true, false, "retention.ms", "604800000", Default},
		{streams, "vehicle.avg.speed", false, true, "cleanup.policy", "delete", Default},
		{ksql, "_confluent-ksql-default__command_topic", false, true, "retention.ms", "-1", DynamicTopic},
		{ksql, "__transaction_state", true, false, "segment.bytes", "104857600", DynamicTopic},
		{zk, "first_topic", false, true, "cleanup.policy", "delete", Default},
	} {
		cfg := topicConfig(t, tc.r, tc.topic)
		v, _ := cfg.Get(tc.config)
		if cfg.Compact != tc.compact || cfg.Delete != tc.delete || v.Value != tc.value || v.Source != tc.source {
			t.Errorf("%s: compact %v delete %v, %s = %+v; want %v %v %s from %s", tc.topic, cfg.Compact, cfg.Delete, tc.config, v,
				tc.compact, tc.delete, tc.value, tc.source)
		}
		if cfg.Known != (tc.r != zk) {
			t.Errorf("%s: known %v", tc.topic, cfg.Known)
		}
	}
}
