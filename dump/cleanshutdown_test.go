package dump

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCleanShutdownMarker dumps the two markers of the broker samples: the
// KRaft broker's holds its epoch as JSON (Kafka 3.7 and later), the 2.x
// broker's is empty.
func TestCleanShutdownMarker(t *testing.T) {
	kraft := filepath.Join(samples, "logdirs", "itumelengmogase_kraft-ksqldb-txn", ".kafka_cleanshutdown")
	zk := filepath.Join(samples, "logdirs", "volodymyrzee_kafka-2.x-zk", ".kafka_cleanshutdown")
	if _, err := os.Stat(kraft); err != nil {
		t.Skipf("real broker samples not available: %v", err)
	}
	for _, c := range []struct {
		path, text     string
		epoch, version any
	}{
		{kraft, "version: 0 brokerEpoch: 53326\n", float64(53326), float64(0)},
		{zk, "empty: a clean shutdown marker without a broker epoch, as Kafka before 3.7 writes it\n", nil, nil},
	} {
		var out, errOut bytes.Buffer
		res, err := Run(resolve(t, c.path), DefaultOptions(), &out, &errOut)
		if err != nil || res.Readable != 1 || res.Problems != 0 || errOut.Len() != 0 {
			t.Fatalf("%s: %+v %v %s", c.path, res, err, errOut.String())
		}
		if want := "Dumping " + c.path + "\n" + c.text; out.String() != want {
			t.Errorf("got %q, want %q", out.String(), want)
		}
		_, objs := runJSON(t, DefaultOptions(), c.path)
		got := ofType(objs, "clean-shutdown")
		if len(got) != 1 || got[0]["brokerEpoch"] != c.epoch || got[0]["version"] != c.version {
			t.Errorf("%s: JSON %v", c.path, objs)
		}
	}
	// A marker that is not what Kafka writes is a problem, not an unknown
	// file.
	bad := filepath.Join(t.TempDir(), ".kafka_cleanshutdown")
	if err := os.WriteFile(bad, []byte(`{"version":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if res, err := Run(resolve(t, bad), DefaultOptions(), &out, &out); err != nil || res.Problems != 1 || res.Readable != 0 {
		t.Errorf("malformed marker: %+v %v\n%s", res, err, out.String())
	}
}

// TestLockFile: the broker's .lock is a known file with nothing to show.
func TestLockFile(t *testing.T) {
	lock := filepath.Join(t.TempDir(), ".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	res, err := Run(resolve(t, lock), DefaultOptions(), &out, &errOut)
	if err != nil || res.Readable != 1 || res.Problems != 0 || bytes.Contains(errOut.Bytes(), []byte("unknown")) {
		t.Errorf("%+v %v\n%s%s", res, err, out.String(), errOut.String())
	}
}
