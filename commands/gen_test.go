package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/testkit/locktest"
)

// gen adds topics to an existing log directory, so it must refuse one a
// broker is running on.
func TestGenRefusesLockedLogDir(t *testing.T) {
	dir := t.TempDir()
	locktest.Hold(t, dir)
	code, _, errOut := runLogtool(t, "gen", "--out", dir, "--records", "10")
	if code != ExitRefused || !strings.Contains(errOut, "locked by a running broker") {
		t.Fatalf("exit %d, stderr %q; want 4", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.properties")); err == nil {
		t.Error("gen wrote into a locked log directory")
	}
}

// TestGenLeavesLockUnlocked: gen leaves its .lock in place, as a broker
// does (unlinking it would let a process that opened it just before lock a
// file nobody else sees), and unlocked.
func TestGenLeavesLockUnlocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--records", "10"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Errorf("gen removed its .lock: %v", err)
	}
	if h, err := lockfile.Held(dir); err != nil || h != nil {
		t.Errorf("Held after gen = %v, %v", h, err)
	}
}

// TestGenRefusesExistingPartition: generating a topic that is already in the
// log directory would write a second log over the first; gen refuses with
// exit 4 before writing, and names the directory.
func TestGenRefusesExistingPartition(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--topic", "orders", "--records", "10"); code != ExitOK {
		t.Fatalf("first gen: exit %d %s", code, errOut)
	}
	before, err := os.ReadFile(filepath.Join(dir, "orders-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runLogtool(t, "gen", "--out", dir, "--topic", "new", "--topic", "orders", "--records", "500")
	if code != ExitRefused || !strings.Contains(errOut, filepath.Join(dir, "orders-0")+": partition directory already exists") {
		t.Errorf("second gen: exit %d %q, want 4 naming orders-0", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "orders-0", "00000000000000000000.log")); !bytes.Equal(after, before) {
		t.Error("orders-0 changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "new-0")); err == nil {
		t.Error("new-0 was written before the refusal")
	}
}

// gen --kraft writes a metadata log holding the topic and broker configs of
// --config and --broker-config; malformed ones are usage errors.
func TestGenKRaftFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	code, _, errOut := runLogtool(t, "gen", "--out", dir, "--kraft", "--topic", "orders", "--records", "10",
		"--config", "orders:cleanup.policy=compact,delete", "--broker-config", "log.retention.hours=48")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, _ := runLogtool(t, "dump", "--deep-iteration", "--cluster-metadata-decoder", filepath.Join(dir, "__cluster_metadata-0", "00000000000000000000.log"))
	for _, want := range []string{`"name":"cleanup.policy","value":"compact,delete"`, `"resourceName":"","name":"log.retention.hours","value":"48"`, `"name":"orders"`} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("exit %d, metadata log lacks %s", code, want)
		}
	}
	for _, args := range [][]string{
		{"--kraft", "--config", "orders=x"}, {"--kraft", "--config", "orders:x"}, {"--kraft", "--config", ":a=b"},
		{"--kraft", "--broker-config", "x"}, {"--config", "orders:a=b"}, {"--kraft", "--config", "other:a=b"},
	} {
		out := filepath.Join(t.TempDir(), "logs")
		code, _, errOut := runLogtool(t, append([]string{"gen", "--out", out, "--topic", "orders"}, args...)...)
		if code != ExitUsage || !strings.Contains(errOut, "config") {
			t.Errorf("%q: exit %d %q, want 2", args, code, errOut)
		}
	}
	// Again on the same log dir: a new topic joins the metadata log, one it
	// has is refused; --kraft on a log dir without KRaft is a usage error.
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--kraft", "--topic", "clicks", "--records", "10"); code != ExitOK {
		t.Fatalf("adding clicks: exit %d: %s", code, errOut)
	}
	if code, out, _ := runLogtool(t, "dump", dir); code != ExitOK || !regexp.MustCompile(`(?m)^clicks-0 +delete `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^orders-0 +compact,delete `).MatchString(out) {
		t.Errorf("exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(filepath.Join(dir, "clicks-0")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--kraft", "--topic", "clicks"); code != ExitRefused || !strings.Contains(errOut, "topic clicks: the topic is in the metadata log already") {
		t.Errorf("clicks again: exit %d: %s", code, errOut)
	}
	plain := filepath.Join(t.TempDir(), "logs")
	runLogtool(t, "gen", "--out", plain, "--topic", "orders", "--records", "10")
	if code, _, errOut := runLogtool(t, "gen", "--out", plain, "--kraft", "--topic", "clicks"); code != ExitUsage || !strings.Contains(errOut, "--kraft: not a KRaft node's log directory") {
		t.Errorf("--kraft on a ZooKeeper-era log dir: exit %d: %s", code, errOut)
	}
}
