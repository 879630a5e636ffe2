package commands

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadablePartition: a partition directory the user cannot read is
// that partition's failure. Every command reports it, goes on with the
// others, and exits 1 at the end.
func TestUnreadablePartition(t *testing.T) {
	dir := usageSample(t)
	run := unprivileged(t, dir)
	bad := filepath.Join(dir, "orders-0")
	if err := os.Chmod(bad, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(bad, 0o755)
	const now = "--now=2024-03-01T00:00:00Z"
	for _, tc := range []struct {
		args []string
		want string // in stdout: the others were worked on
	}{
		{[]string{"dump", dir}, "\norders-1 "},
		{[]string{"dump", "--deep-iteration", bad, filepath.Join(dir, "orders-1")}, "Dumping " + filepath.Join(dir, "orders-1")},
		{[]string{"--format", "json", "dump", dir}, `"topic":"orders","partition":1,`},
		// The others: the cluster metadata's too.
		{[]string{"verify", dir}, "verified 8 partition(s)"},
		{[]string{"reindex", "--check", dir}, "in 8 partition(s)"},
		// orders is a delete topic, which compact reads only when told to
		// compact it.
		{[]string{"compact", "--kafka-defaults", "--dry-run", now, "--max-lag", "1h", "--cleanup-policy", "compact", "--kafka-defaults", dir}, "\norders-1 "},
		{[]string{"retention", "--kafka-defaults", "--dry-run", now, "--retention-ms", "1h", dir}, "\norders-1 "},
		{[]string{"upgrade", "--dry-run", dir}, "\norders-1 "},
		{[]string{"grep", "--key", "key-000001", dir}, "\norders-1 "},
		{[]string{"grep", "--max-lag", "1h", now, dir}, "\norders-1 "},
	} {
		code, stdout, stderr := run(tc.args...)
		all := stdout + stderr
		if code != ExitFailure || !strings.Contains(all, bad) || !strings.Contains(all, "permission denied") || !strings.Contains(stdout, tc.want) {
			t.Errorf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, stdout, stderr)
		}
	}
}

// unprivileged returns a way to run logtool as a user whom file permissions
// bind: this process, unless it is root, whom they do not; then the test
// binary runs as logtool as user nobody, with dir (and the binary) opened
// to it.
func unprivileged(t *testing.T, dir string) func(args ...string) (int, string, string) {
	if os.Geteuid() != 0 {
		return runArgs
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "logtool.test")
	if err := os.Link(exe, bin); err != nil {
		copyFile(t, exe, bin)
	}
	// The temporary directories are the test's own (0700): open them and
	// what they hold to others.
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"logtool"}, args...)...)
		cmd.Args = append([]string{bin}, args...)
		cmd.Env = append(os.Environ(), "LOGTOOL_TEST_AS_LOGTOOL=1")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return ee.ExitCode(), stdout.String(), stderr.String()
		case err != nil:
			t.Skipf("running as root, and cannot run as nobody to be bound by permissions: %v", err)
		}
		return 0, stdout.String(), stderr.String()
	}
	// Nobody must be able to read the copy, or every run fails for that.
	if code, _, stderr := run("dump", "--summary", filepath.Join(dir, "orders-1")); code != ExitOK {
		t.Skipf("running as root, and nobody cannot read the test's files: exit %d, %s", code, stderr)
	}
	return run
}

func copyFile(t *testing.T, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
