package replay

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

func writeProps(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestClientConfigSASL replays into a SASL cluster configured only by a
// client.properties, for each mechanism, the JAAS line continued over
// lines as operators write it.
func TestClientConfigSASL(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 50, Magic: 2, Seed: 1})
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		c := cluster(t, 1, []string{"events"}, kfake.EnableSASL(), kfake.Superuser(mech, "replayer", `s3"cret`))
		module := "org.apache.kafka.common.security.scram.ScramLoginModule"
		if mech == "PLAIN" {
			module = "org.apache.kafka.common.security.plain.PlainLoginModule"
		}
		f := writeProps(t, "# written for kafka-console-producer.sh\nclient.id = replay-test\n"+
			"bootstrap.servers="+strings.Join(c.ListenAddrs(), ",")+"\n"+
			"security.protocol=SASL_PLAINTEXT\nsasl.mechanism:"+mech+"\n"+
			"sasl.jaas.config="+module+" required \\\n    username=\"replayer\" \\\n    password=\"s3\\\\\"cret\";\n")
		cc, err := LoadClientConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", mech, err)
		}
		if len(cc.Warnings) != 0 {
			t.Errorf("%s: warnings %q", mech, cc.Warnings)
		}
		o := options(c)
		o.Brokers, o.Security = cc.Brokers, cc.Security
		if _, err := Run(context.Background(), []*layout.Partition{p}, o); err != nil {
			t.Errorf("%s: %v", mech, err)
		}
	}
}

// certFor makes a CA and a server certificate it signs for names (host
// names or IP addresses); the CA is written to dir as ca.pem.
func certFor(t *testing.T, dir string, names ...string) (tls.Certificate, string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var dns []string
	var ips []net.IP
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, n)
		}
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: dns, IPAddresses: ips,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

// TestClientConfigTLS replays over TLS with a PEM trust store from a file
// and inline; a broker certificate for another name passes only when the
// file turns the hostname check off, and an unknown CA never passes.
func TestClientConfigTLS(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 20, Magic: 2, Seed: 1})
	dir := t.TempDir()
	cert, ca := certFor(t, dir, "broker.example")
	caPEM, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	inline := strings.ReplaceAll(strings.TrimSpace(string(caPEM)), "\n", "\\n\\\n  ")
	_, otherCA := certFor(t, t.TempDir(), "broker.example")
	c := cluster(t, 1, []string{"events"}, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	for _, tc := range []struct {
		name, props string
		ok          bool
	}{
		{"location, no hostname check", "ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\nssl.endpoint.identification.algorithm=\n", true},
		{"inline, no hostname check", "ssl.truststore.type=PEM\nssl.truststore.certificates=" + inline + "\nssl.endpoint.identification.algorithm=\n", true},
		{"hostname checked", "ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n", false},
		{"unknown CA", "ssl.truststore.type=PEM\nssl.truststore.location=" + otherCA + "\nssl.endpoint.identification.algorithm=\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := LoadClientConfig(writeProps(t, "security.protocol=SSL\n"+tc.props))
			if err != nil {
				t.Fatal(err)
			}
			o := options(c)
			o.Security = cc.Security
			o.ClientOpts = []kgo.Opt{kgo.RequestRetries(0)}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = Run(ctx, []*layout.Partition{p}, o)
			if (err == nil) != tc.ok {
				t.Errorf("replay: %v, want success %v", err, tc.ok)
			}
		})
	}
}

// TestClientConfigRefused: what replay cannot honour is refused with what
// to do, never ignored, and no secret is quoted.
func TestClientConfigRefused(t *testing.T) {
	dir := t.TempDir()
	_, ca := certFor(t, dir, "b")
	jks := filepath.Join(dir, "truststore.jks")
	if err := os.WriteFile(jks, []byte{0xfe, 0xed, 0xfe, 0xed}, 0o644); err != nil {
		t.Fatal(err)
	}
	encKey := "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----"
	caPEM, _ := os.ReadFile(ca)
	chain := strings.ReplaceAll(strings.TrimSpace(string(caPEM)), "\n", `\n`)
	for _, tc := range []struct{ props, want string }{
		{"security.protocol=SSL\nssl.truststore.location=" + jks + "\nssl.truststore.password=changeit", "keytool -importkeystore"},
		{"security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=" + jks, "set ssl.truststore.type=PEM"},
		{"security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=" + jks, "openssl pkcs12"},
		{"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\nssl.truststore.password=changeit", "ssl.truststore.password"},
		{"security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.certificate.chain=" + chain + "\nssl.keystore.key=" +
			strings.ReplaceAll(encKey, "\n", `\n`) + "\nssl.key.password=k3y-pw", "openssl pkcs8"},
		{"security.protocol=SSL\nssl.endpoint.identification.algorithm=ldaps", "ssl.endpoint.identification.algorithm"},
		{"security.protocol=SASL_SSL", "GSSAPI"},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER", "OAUTHBEARER"},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN", "sasl.jaas.config"},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p4ss\";", "PlainLoginModule"},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p4ss\" tokenauth=\"true\";", "tokenauth"},
		{"security.protocol=TLS", "security.protocol"},
	} {
		_, err := LoadClientConfig(writeProps(t, tc.props))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.props, err, tc.want)
			continue
		}
		for _, secret := range []string{"changeit", "k3y-pw", "p4ss"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%q: the error quotes a secret: %v", tc.props, err)
			}
		}
	}
}

// TestClientConfigWarnings: properties replay does not use are named, and
// those that change nothing for a producer are not.
func TestClientConfigWarnings(t *testing.T) {
	cc, err := LoadClientConfig(writeProps(t, "client.id=x\nrequest.timeout.ms=1000\nssl.truststore.location=/nowhere\n"+
		"sasl.mechanism=PLAIN\nssl.cipher.suites=TLS_AES_128_GCM_SHA256\nacks=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sasl.mechanism, ssl.cipher.suites, ssl.truststore.location not used: security.protocol is PLAINTEXT",
		"acks not supported by replay, ignored"}
	if !slices.Equal(cc.Warnings, want) {
		t.Errorf("warnings %q, want %q", cc.Warnings, want)
	}
	if cc.Security.TLS || cc.Security.SASLMechanism != "" {
		t.Errorf("PLAINTEXT gave %+v", cc.Security)
	}
	cc, err = LoadClientConfig(writeProps(t, "security.protocol=SSL\nssl.cipher.suites=TLS_AES_128_GCM_SHA256\nssl.enabled.protocols=TLSv1.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ssl.cipher.suites, ssl.enabled.protocols not supported by replay, ignored"}; !slices.Equal(cc.Warnings, want) {
		t.Errorf("warnings %q, want %q", cc.Warnings, want)
	}
}
