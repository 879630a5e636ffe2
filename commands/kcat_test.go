package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestKcatPipeline: the real kcat -J, consuming a partition that replay
// produced into an in-process cluster, and export --format kcat of the
// same partition agree line by line and field by field, broker aside
// (kcat names the broker that served the message, export -1). The
// partition has headers and tombstones, and offsets from 0 without gaps, so
// the cluster gives each record the offset it has on disk.
func TestKcatPipeline(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat): the kcat pipeline is not checked")
	}
	const topic = "user-profiles"
	dir := filepath.Join(sample, topic+"-0")
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	if code, _, stderr := runArgs("--no-progress", "replay", "--bootstrap-server", addr, dir); code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	code, exported, stderr := runArgs("--no-progress", "export", "--format", "kcat", dir)
	if code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J", "-q")
	var consumed, kcatErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &consumed, &kcatErr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat: %v: %s", err, kcatErr.String())
	}
	want, got := kcatLines(t, consumed.String()), kcatLines(t, exported)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("export wrote %d line(s), kcat consumed %d", len(got), len(want))
	}
	var headers, tombstones int
	for i := range want {
		if got[i]["broker"] != json.Number("-1") {
			t.Errorf("line %d: broker %v, want -1", i, got[i]["broker"])
		}
		if _, ok := want[i]["broker"]; !ok {
			t.Errorf("kcat line %d has no broker", i)
		}
		delete(got[i], "broker")
		delete(want[i], "broker")
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("line %d:\nexport %v\nkcat   %v", i, got[i], want[i])
		}
		if _, ok := want[i]["headers"]; ok {
			headers++
		}
		if want[i]["payload"] == nil {
			tombstones++
		}
	}
	if headers == 0 || tombstones == 0 {
		t.Errorf("%d record(s) with headers, %d tombstone(s): the sample no longer tests them", headers, tombstones)
	}
}

// kcatLines parses JSON Lines, numbers kept exact.
func kcatLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}
