package replay

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestTLS replays over TLS with the CA given, and fails without it.
func TestTLS(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 50, Magic: 2, Seed: 1})
	cert, ca := certFor(t, t.TempDir(), "127.0.0.1", "localhost")
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
