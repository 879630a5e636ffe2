package replay

import (
	"reflect"
	"testing"
)

// TestSecurityWith: what is given replaces, what is not stays, and a
// client certificate or key given drops both of the properties' own, so
// that a flag's key never meets the properties' certificate.
func TestSecurityWith(t *testing.T) {
	props := Security{TLS: true, CAPEM: []byte("ca"), CertPEM: []byte("cert"), KeyPEM: []byte("key"),
		ServerName: "a", SASLMechanism: "PLAIN", User: "u", Password: "p"}
	no, key, ca, user := false, "k.pem", "ca.pem", "v"
	for _, tc := range []struct {
		name string
		o    Override
		want Security
	}{
		{"nothing given", Override{}, props},
		{"key given", Override{KeyFile: &key}, Security{TLS: true, CAPEM: []byte("ca"), KeyFile: key,
			ServerName: "a", SASLMechanism: "PLAIN", User: "u", Password: "p"}},
		{"--tls=false, a CA, a user, a password", Override{TLS: &no, CAFile: &ca, User: &user, Password: "q"},
			Security{CAFile: ca, CertPEM: []byte("cert"), KeyPEM: []byte("key"), ServerName: "a", SASLMechanism: "PLAIN", User: "v", Password: "q"}},
	} {
		if got := props.With(tc.o); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
