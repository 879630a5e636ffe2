package topicconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServerPropertiesWarnings: the keys of a server.properties a broker
// ignores though they look meant for the log are named with their line (a
// log.* typo, a topic config's name, the first key behind a UTF-8 byte
// order mark, which a broker reads as part of it, and which is not taken
// here either); a broker config logtool does not read, a real log.*
// config and a comment behind the mark are not.
func TestServerPropertiesWarnings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.properties", "# a broker\nlisteners=PLAINTEXT://:9092\nnum.network.threads=3\nlog.dirs=/var/kafka\n"+
		"log.retention.hours=168\nlog.cleaner.threads=2\nlog.retention.check.interval.ms=300000\n")
	bad := write("bad.properties", "\ufefflog.retention.hours=1\nlisteners=PLAINTEXT://:9092\nlog.retention.hour=2\n"+
		"retention.ms=5\nlog.cleaner.thread=2\nremote.storage.enable=true\n")
	comment := write("comment.properties", "\ufeff# a broker\nlog.retention.hours=1\n")
	spaced := write("spaced.properties", "\ufeff  log.retention.hours=1\n")
	for _, c := range []struct {
		path string
		want []string
	}{
		{clean, nil},
		{comment, nil},
		{spaced, []string{spaced + ` line 1: a UTF-8 byte order mark and whitespace start the file, and a broker reads the mark as the first key and "log.retention.hours=1" as its value: not recognised; ignored, as a broker ignores it`}},
		{bad, []string{
			bad + " line 1: a UTF-8 byte order mark starts the file, and a broker reads it as part of the first key: log.retention.hours is not recognised; ignored, as a broker ignores it",
			bad + " line 3: log.retention.hour is not a broker config logtool knows; ignored, as a broker ignores it",
			bad + " line 4: retention.ms is a topic config, not a broker config (the broker's is log.retention.ms); ignored, as a broker ignores it",
			bad + " line 5: log.cleaner.thread is not a broker config logtool knows; ignored, as a broker ignores it",
			bad + " line 6: remote.storage.enable is a topic config, not a broker config; ignored, as a broker ignores it",
		}},
	} {
		cat, err := Load(nil, Options{ServerProperties: c.path})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cat.Warnings, c.want) {
			t.Errorf("%s: warnings\n%s\nwant\n%s", c.path, strings.Join(cat.Warnings, "\n"), strings.Join(c.want, "\n"))
		}
	}
	// The key behind the mark is not log.retention.hours, for a broker or
	// here: the retention is Kafka's default.
	cat, err := Load(nil, Options{ServerProperties: bad})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cat.For("").Topic("t")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Get(RetentionMs); v.Source != Default {
		t.Errorf("retention.ms = %+v behind a byte order mark", v)
	}
}

// Every log.* broker config logtool reads is one a broker knows, so that
// it is never warned about.
func TestBrokerLogConfigsHoldSynonyms(t *testing.T) {
	for _, d := range defs {
		for _, s := range d.synonyms {
			if strings.HasPrefix(s.name, "log.") && !slices.Contains(brokerLogConfigs, s.name) {
				t.Errorf("%s, a synonym of %s, is not in brokerLogConfigs", s.name, d.name)
			}
		}
	}
}
