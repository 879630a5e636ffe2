// Package kafkasamples finds the log directories and record sets that real
// brokers wrote (../shared/kafka-samples), which tests read by path and
// never copy into the repository.
package kafkasamples

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Env names the environment variable that points the tests at the samples
// elsewhere.
const Env = "LOGTOOL_SAMPLES"

// Dir is the samples directory joined with elem: $LOGTOOL_SAMPLES, else
// ../shared/kafka-samples beside the module root. Symlinks in it are
// resolved, so that it compares equal to the real paths commands report.
func Dir(elem ...string) string {
	root := os.Getenv(Env)
	if root == "" {
		root = filepath.Join(moduleRoot(), "..", "shared", "kafka-samples")
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Need returns Dir(elem...), or skips t when it does not exist.
func Need(t testing.TB, elem ...string) string {
	t.Helper()
	p := Dir(elem...)
	if _, err := os.Stat(p); err != nil {
		Skip(t, err)
	}
	return p
}

var once sync.Once

// Skip skips t for want of the samples. A skip shows only with -v, so the
// first in a test binary also says so on stderr, where every run shows it.
func Skip(t testing.TB, err error) {
	t.Helper()
	once.Do(func() {
		fmt.Fprintf(os.Stderr, "NOTE: Kafka broker samples not found (%v): the tests that read them are skipped; set %s to their directory\n", err, Env)
	})
	t.Skipf("Kafka broker samples not found: %v", err)
}

// moduleRoot is the nearest directory above the working directory (a
// package's, under go test) that holds go.mod.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
