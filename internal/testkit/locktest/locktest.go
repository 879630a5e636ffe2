//go:build unix

// Package locktest plays a running broker in tests: a second process that
// holds the POSIX fcntl lock on a log directory's .lock, as the JVM does.
// It must be a second process because fcntl locks never conflict within
// one.
//
// Importing the package is enough: when the test binary is started by Hold,
// this package's init takes the lock, reports it on stdout and waits for its
// stdin to close, before any test runs.
package locktest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	env     = "LOGTOOL_LOCKTEST_HOLD"
	envComm = "LOGTOOL_LOCKTEST_COMM"
)

func init() {
	dir := os.Getenv(env)
	if dir == "" {
		return
	}
	if comm := os.Getenv(envComm); comm != "" {
		// The name a holder's process goes by (Linux).
		if err := os.WriteFile("/proc/self/comm", []byte(comm), 0); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// Hold starts a process that holds logDir's lock until the test ends, as a
// broker would.
func Hold(t testing.TB, logDir string) {
	t.Helper()
	hold(t, logDir, "")
}

// HoldLogtool is Hold by a process named logtool, as another run of logtool
// holds the lock (Linux only: elsewhere the name cannot be set).
func HoldLogtool(t testing.TB, logDir string) {
	t.Helper()
	hold(t, logDir, "logtool")
}

func hold(t testing.TB, logDir, comm string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+logDir)
	if comm != "" {
		cmd.Env = append(cmd.Env, envComm+"="+comm)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("lock holder: %v", err)
		}
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}
}
