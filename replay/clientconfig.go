package replay

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/javaprops"
)

// ClientConfig is what a Kafka client configuration file (the
// client.properties Kafka's tools take with --command-config) says about
// reaching a cluster.
type ClientConfig struct {
	Brokers  []string // bootstrap.servers; nil when not set
	Security Security
	// Warnings name the properties replay does not use.
	Warnings []string
}

// unused are client properties that do not change what replay sends or how
// it authenticates: they are accepted without a warning.
var unused = []string{
	"client.id", "client.dns.lookup", "client.rack", "request.timeout.ms", "retry.backoff.ms", "retry.backoff.max.ms",
	"reconnect.backoff.ms", "reconnect.backoff.max.ms", "metadata.max.age.ms", "connections.max.idle.ms",
	"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms", "default.api.timeout.ms",
	"send.buffer.bytes", "receive.buffer.bytes",
}

// LoadClientConfig reads a client.properties file. It refuses what it
// cannot honour when it would change security (a JKS or PKCS12 store, a
// mechanism other than PLAIN and SCRAM, an encrypted PEM key), and warns of
// the other properties it does not use. Errors name properties, never
// their secret values.
func LoadClientConfig(path string) (ClientConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ClientConfig{}, err
	}
	props, err := javaprops.Parse(data)
	if err != nil {
		return ClientConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	cc, err := clientConfig(props)
	if err != nil {
		return cc, fmt.Errorf("%s: %w", path, err)
	}
	return cc, nil
}

func clientConfig(props map[string]string) (ClientConfig, error) {
	var cc ClientConfig
	used := map[string]bool{}
	get := func(k string) (string, bool) {
		used[k] = true
		v, ok := props[k]
		return strings.TrimSpace(v), ok
	}
	if v, ok := get("bootstrap.servers"); ok && v != "" {
		for _, b := range strings.Split(v, ",") {
			cc.Brokers = append(cc.Brokers, strings.TrimSpace(b))
		}
	}
	proto, ok := get("security.protocol")
	if !ok {
		proto = "PLAINTEXT" // Kafka's default
	}
	proto = strings.ToUpper(proto)
	var useTLS, useSASL bool
	switch proto {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return cc, fmt.Errorf("security.protocol: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got %q", proto)
	}
	cc.Security.TLS = useTLS
	if useSASL {
		if err := sasl(&cc.Security, get); err != nil {
			return cc, err
		}
	}
	if useTLS {
		if err := sslStores(&cc.Security, get); err != nil {
			return cc, err
		}
	}
	var unknown, idle []string
	for k := range props {
		switch {
		case used[k] || slices.Contains(unused, k):
		case strings.HasPrefix(k, "ssl.") && !useTLS, strings.HasPrefix(k, "sasl.") && !useSASL:
			idle = append(idle, k)
		default:
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	slices.Sort(idle)
	if len(idle) > 0 {
		cc.Warnings = append(cc.Warnings, fmt.Sprintf("%s not used: security.protocol is %s", strings.Join(idle, ", "), proto))
	}
	if len(unknown) > 0 {
		cc.Warnings = append(cc.Warnings, fmt.Sprintf("%s not supported by replay, ignored", strings.Join(unknown, ", ")))
	}
	return cc, nil
}

// jaasOption is one key="value" of a JAAS login module's options.
var jaasOption = regexp.MustCompile(`^\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))`)

var jaasEscape = regexp.MustCompile(`\\(.)`)

// sasl reads sasl.mechanism and the user and password of sasl.jaas.config.
func sasl(s *Security, get func(string) (string, bool)) error {
	mech, ok := get("sasl.mechanism")
	if !ok {
		mech = "GSSAPI" // Kafka's default
	}
	var module string
	switch mech {
	case "PLAIN":
		module = "org.apache.kafka.common.security.plain.PlainLoginModule"
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		module = "org.apache.kafka.common.security.scram.ScramLoginModule"
	default:
		return fmt.Errorf("sasl.mechanism %s is not supported: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
	}
	jaas, ok := get("sasl.jaas.config")
	if !ok {
		return fmt.Errorf("sasl.mechanism %s needs sasl.jaas.config: %s required username=\"...\" password=\"...\";", mech, module)
	}
	rest, found := strings.CutPrefix(jaas, module)
	if !found {
		return fmt.Errorf("sasl.jaas.config: want the login module %s for sasl.mechanism %s", module, mech)
	}
	rest, found = strings.CutPrefix(strings.TrimSpace(rest), "required")
	if !found {
		return errors.New("sasl.jaas.config: want the control flag required after the login module")
	}
	opts := map[string]string{}
	for {
		m := jaasOption.FindStringSubmatchIndex(rest)
		if m == nil {
			break
		}
		var v string
		if m[4] >= 0 {
			v = jaasEscape.ReplaceAllString(rest[m[4]:m[5]], "$1")
		} else {
			v = rest[m[6]:m[7]]
		}
		opts[rest[m[2]:m[3]]] = v
		rest = rest[m[1]:]
	}
	if strings.TrimSpace(rest) != ";" {
		return errors.New(`sasl.jaas.config: want options key="value" and a closing ;`)
	}
	s.SASLMechanism, s.User, s.Password = mech, opts["username"], opts["password"]
	if s.User == "" || s.Password == "" {
		return errors.New("sasl.jaas.config: want a username and a password")
	}
	delete(opts, "username")
	delete(opts, "password")
	if len(opts) > 0 {
		// An option such as tokenauth changes how the server checks the
		// password: replay cannot honour it.
		return fmt.Errorf("sasl.jaas.config: options %s are not supported", strings.Join(slices.Sorted(maps.Keys(opts)), ", "))
	}
	return nil
}

// toPEM is how to turn a JKS or PKCS12 store into the PEM replay reads.
const toPEM = "replay reads PEM stores only; convert it with keytool -importkeystore -srckeystore STORE -destkeystore store.p12 -deststoretype PKCS12 " +
	"(for a JKS store), then openssl pkcs12 -in store.p12 -out store.pem %s, and set %s.type=PEM and %s.location=store.pem"

// sslStores reads the PEM trust store, key store and hostname check.
func sslStores(s *Security, get func(string) (string, bool)) error {
	tsType, _ := get("ssl.truststore.type")
	tsLoc, hasLoc := get("ssl.truststore.location")
	tsCerts, hasCerts := get("ssl.truststore.certificates")
	if _, ok := get("ssl.truststore.password"); ok && (tsType == "PEM" || hasCerts) {
		return errors.New("ssl.truststore.password cannot be given for a PEM trust store")
	}
	switch {
	case hasLoc && hasCerts:
		return errors.New("give ssl.truststore.location or ssl.truststore.certificates, not both")
	case (hasLoc || hasCerts) && tsType != "PEM":
		return fmt.Errorf("ssl.truststore.type %s: "+toPEM, storeType(tsType), "-nokeys", "ssl.truststore", "ssl.truststore")
	case hasLoc:
		b, err := os.ReadFile(tsLoc)
		if err != nil {
			return fmt.Errorf("ssl.truststore.location: %w", err)
		}
		s.CAPEM = b
	case hasCerts:
		s.CAPEM = []byte(tsCerts)
	}

	ksType, _ := get("ssl.keystore.type")
	ksLoc, hasKSLoc := get("ssl.keystore.location")
	chain, hasChain := get("ssl.keystore.certificate.chain")
	key, hasKey := get("ssl.keystore.key")
	_, hasKSPass := get("ssl.keystore.password")
	keyPass, hasKeyPass := get("ssl.key.password")
	switch {
	case hasChain != hasKey:
		return errors.New("ssl.keystore.certificate.chain and ssl.keystore.key go together")
	case hasKey && hasKSLoc:
		return errors.New("give ssl.keystore.location or ssl.keystore.key, not both")
	case (hasKey || hasKSLoc) && ksType != "PEM":
		return fmt.Errorf("ssl.keystore.type %s: "+toPEM+" (the key unencrypted: keep the file private)",
			storeType(ksType), "-nodes", "ssl.keystore", "ssl.keystore")
	case (hasKey || hasKSLoc) && hasKSPass:
		return errors.New("ssl.keystore.password cannot be given for a PEM key store, only ssl.key.password")
	case hasKSLoc:
		b, err := os.ReadFile(ksLoc)
		if err != nil {
			return fmt.Errorf("ssl.keystore.location: %w", err)
		}
		s.CertPEM, s.KeyPEM = b, b
	case hasKey:
		s.CertPEM, s.KeyPEM = []byte(chain), []byte(key)
	}
	if s.CertPEM != nil {
		// An encrypted key is refused by keyPair; ssl.key.password alone
		// on a plain key changes nothing.
		if _, err := keyPair(s.CertPEM, s.KeyPEM); err != nil {
			return fmt.Errorf("ssl.keystore: %w", err)
		}
	} else if hasKeyPass && keyPass != "" {
		return errors.New("ssl.key.password is given without a PEM key store")
	}

	switch alg, ok := get("ssl.endpoint.identification.algorithm"); {
	case !ok || strings.EqualFold(alg, "https"):
	case alg == "":
		s.SkipHostnameCheck = true
	default:
		return fmt.Errorf("ssl.endpoint.identification.algorithm: want https or empty, got %q", alg)
	}
	return nil
}

func storeType(t string) string {
	if t == "" {
		return "not set (Kafka's default is JKS)"
	}
	return t
}
