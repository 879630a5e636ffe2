//go:build unix

package replay

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// TestResumeAfterKill runs the built binary against an in-process cluster,
// kills it with SIGKILL once its resume file shows progress, and runs it
// again to the end: every record arrives, in order within each run, and
// those sent twice are at most the records in flight.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "logtool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/logtool/logtool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const n = 30_000
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: n, Keys: 100, ValueBytes: 50, Magic: 2, BatchRecords: 20, Seed: 9})
	c := cluster(t, 1, []string{"events"})
	resume := filepath.Join(tmp, "resume")
	const inFlight = 1000
	args := []string{"--no-progress", "replay", "--bootstrap-server", strings.Join(c.ListenAddrs(), ","), "--resume", resume,
		"--max-in-flight", "1000", "--rate", "600KiB", p.Path}

	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if e, err := checkpoint.ReadOffsetsFile(resume); err == nil && len(e) == 1 && e[0].Offset > n/10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress in the resume file: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	e, err := checkpoint.ReadOffsetsFile(resume)
	if err != nil || len(e) != 1 || e[0].Offset >= n {
		t.Fatalf("resume file after the kill: %+v, %v", e, err)
	}
	t.Logf("killed at offset %d", e[0].Offset)

	out, err := exec.Command(bin, append(args[:len(args)-3], p.Path)...).CombinedOutput()
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(resume); string(b) != "0\n1\nevents 0 30000\n" {
		t.Errorf("resume file at the end: %q", b)
	}
	checkResumed(t, ids(t, consume(t, c, "events", n)), n, inFlight+500)
}
