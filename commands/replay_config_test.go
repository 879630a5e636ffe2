package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestReplayCommandConfig: replay connects with what --command-config
// says, and a flag given overrides the file's value, bootstrap servers and
// SASL credentials alike; a JKS store is refused (exit 2) with how to
// convert it.
func TestReplayCommandConfig(t *testing.T) {
	part := filepath.Join(usageSample(t), "orders-0")
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "ops", "right-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	props := func(bootstrap, user, pw string) string {
		f := filepath.Join(t.TempDir(), "client.properties")
		text := "bootstrap.servers=" + bootstrap + "\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\"" + pw + "\";\n"
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	addr := strings.Join(c.ListenAddrs(), ",")
	if code, out, errOut := runArgs("replay", "--command-config", props(addr, "ops", "right-pw"), part); code != 0 {
		t.Fatalf("from the file alone: exit %d\n%s%s", code, out, errOut)
	}
	// The file names no reachable broker and stale credentials: only the
	// flags can make this run succeed.
	t.Setenv("LOGTOOL_TEST_PW", "right-pw")
	if code, out, errOut := runArgs("replay", "--command-config", props("127.0.0.1:1", "old", "stale-pw"), "--bootstrap-server", addr,
		"--sasl-user", "ops", "--sasl-password-env", "LOGTOOL_TEST_PW", part); code != 0 {
		t.Fatalf("flags over the file: exit %d\n%s%s", code, out, errOut)
	}

	jks := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(jks, []byte("security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\nssl.truststore.password=changeit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runArgs("replay", "--command-config", jks, "--bootstrap-server", addr, part)
	if code != 2 || !strings.Contains(errOut, "--command-config") || !strings.Contains(errOut, "keytool") || strings.Contains(errOut, "changeit") {
		t.Errorf("a JKS trust store: exit %d, %q", code, errOut)
	}
}
