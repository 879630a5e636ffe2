package replay

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
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
	// CAPEM, CertPEM and KeyPEM are the same as the files, given as their
	// content (a client.properties holds them inline or names a file);
	// a file, when set, wins. KeyPEM may be CertPEM, one file holding both.
	CAPEM, CertPEM, KeyPEM []byte
	// SkipHostnameCheck checks the broker's certificate chain but not the
	// name in it (ssl.endpoint.identification.algorithm empty).
	SkipHostnameCheck bool

	SASLMechanism string // plain, scram-sha-256 or scram-sha-512 (any case, - or _)
	User          string
	// Password is the secret itself; callers read it from an environment
	// variable or a file, never from the command line. It appears in no
	// error.
	Password string
}

// Override is what a command line gives over a Security, as Kafka's tools
// let a flag override their client properties: nil is not given.
type Override struct {
	TLS, InsecureSkipVerify                                    *bool
	CAFile, CertFile, KeyFile, ServerName, SASLMechanism, User *string
	Password                                                   string // "": not given
}

// With is s with o laid over it. A client certificate or key given
// replaces both of s's, files and PEMs, so that a certificate is never
// paired with a key from elsewhere; a CA file replaces s's CA.
func (s Security) With(o Override) Security {
	over(&s.TLS, o.TLS)
	over(&s.InsecureSkipVerify, o.InsecureSkipVerify)
	over(&s.ServerName, o.ServerName)
	over(&s.SASLMechanism, o.SASLMechanism)
	over(&s.User, o.User)
	if o.CAFile != nil {
		s.CAFile, s.CAPEM = *o.CAFile, nil
	}
	if o.CertFile != nil || o.KeyFile != nil {
		s.CertFile, s.KeyFile, s.CertPEM, s.KeyPEM = deref(o.CertFile), deref(o.KeyFile), nil, nil
	}
	if o.Password != "" {
		s.Password = o.Password
	}
	return s
}

// over sets *dst to *src, when src is given.
func over[T any](dst, src *T) {
	if src != nil {
		*dst = *src
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Opts turns the settings into client options. A setting it refuses is a
// *fielderr.Error.
func (s Security) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS || s.CAFile != "" || s.CertFile != "" || s.InsecureSkipVerify || s.ServerName != "" || s.CAPEM != nil || s.CertPEM != nil {
		c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName, InsecureSkipVerify: s.InsecureSkipVerify}
		ca, caField := s.CAPEM, "CAPEM"
		if s.CAFile != "" {
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				return nil, fielderr.New("CAFile", "%v", err)
			}
			ca, caField = pem, "CAFile"
		}
		if ca != nil {
			c.RootCAs = x509.NewCertPool()
			if !c.RootCAs.AppendCertsFromPEM(ca) {
				return nil, fielderr.New(caField, "no PEM certificate in the CA certificates")
			}
		}
		if (s.CertFile == "") != (s.KeyFile == "") {
			return nil, fielderr.New("CertFile", "a client certificate and its key (KeyFile) go together")
		}
		if s.CertFile != "" {
			cert, err := loadKeyPair(s.CertFile, s.KeyFile)
			if err != nil {
				return nil, fielderr.New("CertFile", "%v", err)
			}
			c.Certificates = []tls.Certificate{cert}
		} else if s.CertPEM != nil {
			cert, err := keyPair(s.CertPEM, s.KeyPEM)
			if err != nil {
				return nil, fielderr.New("CertPEM", "%v", err)
			}
			c.Certificates = []tls.Certificate{cert}
		}
		if s.SkipHostnameCheck && !s.InsecureSkipVerify {
			// Go checks the chain and the name together: turn both off
			// and check the chain here.
			c.InsecureSkipVerify = true
			c.VerifyConnection = func(cs tls.ConnectionState) error {
				o := x509.VerifyOptions{Roots: c.RootCAs, Intermediates: x509.NewCertPool()}
				for _, ic := range cs.PeerCertificates[1:] {
					o.Intermediates.AddCert(ic)
				}
				_, err := cs.PeerCertificates[0].Verify(o)
				return err
			}
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

func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	c, err := keyPair(cert, key)
	if err != nil {
		return c, fmt.Errorf("%s with the key in %s: %w", certFile, keyFile, err)
	}
	return c, nil
}

// keyPair parses a PEM certificate chain and its key. Errors never quote
// the key.
func keyPair(cert, key []byte) (tls.Certificate, error) {
	for rest := key; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		// Kafka's PEM keys with ssl.key.password are encrypted PKCS#8, which
		// Go's standard library cannot decrypt.
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
			return tls.Certificate{}, errors.New("the private key is encrypted, which replay cannot read; decrypt it into a file only you can read " +
				"(openssl pkcs8 -in key.pem -out key-plain.pem) and drop ssl.key.password")
		}
	}
	c, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return c, errors.New("not a PEM certificate chain and its private key")
	}
	return c, nil
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
