package replay

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/logtool/logtool/internal/fielderr"
)

// Security is how to connect: TLS and SASL, with the names franz-go's
// examples and kcat users know (security.protocol SSL or SASL_SSL,
// sasl.mechanism PLAIN, SCRAM-SHA-256, SCRAM-SHA-512).
type Security struct {
	TLS                bool
	CAFile             string // PEM; empty: the system's roots
	CertFile, KeyFile  string // PEM client certificate and key, for mutual TLS
	InsecureSkipVerify bool
	ServerName         string // overrides the name checked in the broker's certificate

	SASLMechanism string // plain, scram-sha-256 or scram-sha-512 (any case, - or _)
	User          string
	// Password is the secret itself; callers read it from an environment
	// variable or a file, never from the command line. It appears in no
	// error.
	Password string
}

// Opts turns the settings into client options. A setting it refuses is a
// *fielderr.Error.
func (s Security) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS || s.CAFile != "" || s.CertFile != "" || s.InsecureSkipVerify || s.ServerName != "" {
		c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName, InsecureSkipVerify: s.InsecureSkipVerify}
		if s.CAFile != "" {
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				return nil, fielderr.New("CAFile", "%v", err)
			}
			c.RootCAs = x509.NewCertPool()
			if !c.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fielderr.New("CAFile", "no PEM certificate in %s", s.CAFile)
			}
		}
		if (s.CertFile == "") != (s.KeyFile == "") {
			return nil, fielderr.New("CertFile", "a client certificate and its key (KeyFile) go together")
		}
		if s.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
			if err != nil {
				// The key file's content is never quoted: only its name.
				return nil, fielderr.New("CertFile", "cannot load %s with the key in %s", s.CertFile, s.KeyFile)
			}
			c.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(c))
	}
	if s.SASLMechanism == "" {
		if s.User != "" || s.Password != "" {
			return nil, fielderr.New("SASLMechanism", "a SASL user or password needs a mechanism")
		}
		return opts, nil
	}
	if s.User == "" || s.Password == "" {
		return nil, fielderr.New("SASLMechanism", "needs a user and a password")
	}
	switch strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(s.SASLMechanism)) {
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()))
	case "scramsha256":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()))
	case "scramsha512":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()))
	default:
		return nil, fielderr.New("SASLMechanism", "want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, got %q", s.SASLMechanism)
	}
	return opts, nil
}

// Secret reads a password from the environment variable env or the file
// path (one of the two), without a trailing newline. Errors name the
// variable or file, never the content.
func Secret(env, path string) (string, error) {
	switch {
	case env != "" && path != "":
		return "", errors.New("give the password in an environment variable or in a file, not both")
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set", env)
		}
		return v, nil
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("%s is empty", path)
		}
		return v, nil
	}
	return "", nil
}
