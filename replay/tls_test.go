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
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// selfSigned makes a certificate for 127.0.0.1 and writes it, as the CA
// file a client trusts, to dir.
func selfSigned(t *testing.T, dir string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

// TestTLS replays over TLS with the CA given, and fails without it.
func TestTLS(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 50, Magic: 2, Seed: 1})
	cert, ca := selfSigned(t, t.TempDir())
	c := cluster(t, 1, []string{"events"}, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	o := options(c)
	o.Security = Security{TLS: true, CAFile: ca}
	if _, err := Run(context.Background(), []*layout.Partition{p}, o); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	o.Security = Security{TLS: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Run(ctx, []*layout.Partition{p}, o); err == nil {
		t.Error("an unknown CA was trusted")
	}
}
