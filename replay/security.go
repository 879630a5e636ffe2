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

// Opts turns the settings into client options.
func (s Security) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS || s.CAFile != "" || s.CertFile != "" || s.InsecureSkipVerify || s.ServerName != "" {
		c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName, InsecureSkipVerify: s.InsecureSkipVerify}
		if s.CAFile != "" {
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				return nil, fmt.Errorf("--tls-ca: %w", err)
			}
			c.RootCAs = x509.NewCertPool()
			if !c.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", s.CAFile)
			}
		}
		if (s.CertFile == "") != (s.KeyFile == "") {
			return nil, errors.New("--tls-cert and --tls-key go together")
		}
		if s.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
			if err != nil {
				// The key file's content is never quoted: only its name.
				return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: cannot load the pair", s.CertFile, s.KeyFile)
			}
			c.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(c))
	}
	if s.SASLMechanism == "" {
		if s.User != "" || s.Password != "" {
			return nil, errors.New("a SASL user or password without --sasl-mechanism")
		}
		return opts, nil
	}
	if s.User == "" || s.Password == "" {
		return nil, errors.New("--sasl-mechanism needs --sasl-user and a password (--sasl-password-env or --sasl-password-file)")
	}
	switch strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(s.SASLMechanism)) {
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()))
	case "scramsha256":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()))
	case "scramsha512":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("--sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.SASLMechanism)
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
