package protocol_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	p "github.com/logtool/logtool/logfmt/protocol"
	"github.com/logtool/logtool/logfmt/protocol/prototest"
)

// b builds inputs field by field.
type b = prototest.Wire

var (
	pair = &p.Struct{Fields: []p.Field{
		p.F("topic", p.String, p.Since(0)),
		p.F("partitions", p.Int32, p.Since(0)).Arr(),
	}}
	testMsg = &p.Message{Name: "Test", Valid: p.Versions{Min: 0, Max: 2}, Flexible: p.Since(2), Struct: p.Struct{Fields: []p.Field{
		p.F("flag", p.Bool, p.Since(0)),
		p.F("small", p.Int8, p.Since(0)),
		p.F("port", p.Uint16, p.Since(0)),
		p.F("count", p.Uint32, p.Since(0)),
		p.F("id", p.Int64, p.Since(0)),
		p.F("name", p.String, p.Since(0)).Null(p.Since(1)),
		p.F("blob", p.Bytes, p.Since(0)).Null(p.Since(0)),
		p.F("uuid", p.UUID, p.Since(1)),
		p.F("pairs", p.Nested, p.Since(0)).Arr().Null(p.Since(0)).Of(pair),
		p.F("epoch", p.Int16, p.Since(1)),
		p.F("hint", p.Int32, p.Since(2)).TaggedAs(0, p.Since(2), -1),
		p.F("note", p.String, p.Since(2)).Null(p.Since(2)).TaggedAs(1, p.Since(2), 0).NullDefault(),
	}}}
)

func TestDecodeJSON(t *testing.T) {
	uuid := b(make([]byte, 16))
	uuid[15] = 1
	for _, c := range []struct {
		name    string
		version int16
		in      b
		want    string
	}{
		{"v0 non-flexible", 0,
			b{}.I8(1).I8(-2).I16(-1).I32(-1).I64(-5).Str("a\"b\n").I32(-1).I32(1).Str("t").I32(2).I32(0).I32(7),
			`{"flag":true,"small":-2,"port":65535,"count":4294967295,"id":-5,"name":"a\"b\n","blob":null,"pairs":[{"topic":"t","partitions":[0,7]}]}`},
		{"v1 null string and array, uuid", 1,
			append(b{}.I8(0).I8(0).I16(9093).I32(0).I64(0).I16(-1).I32(2).I16(0x6869), uuid...).I32(-1).I16(3),
			`{"flag":false,"small":0,"port":9093,"count":0,"id":0,"name":null,"blob":"aGk=","uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":null,"epoch":3}`},
		{"v2 flexible, tagged fields at default", 2,
			append(b{}.I8(2).I8(1).I16(1).I32(1).I64(1).CStr("x").Uv(1), uuid...).Uv(2).CStr("t").Uv(1).Uv(0).I16(4).Uv(0),
			`{"flag":true,"small":1,"port":1,"count":1,"id":1,"name":"x","blob":"","uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":[{"topic":"t","partitions":[]}],"epoch":4}`},
		{"v2 tagged fields set, unknown tag skipped", 2,
			append(b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(0).Uv(0), uuid...).Uv(0).I16(0).
				Uv(3).Uv(0).Uv(4).I32(42).Uv(1).Uv(3).CStr("hi").Uv(9).Uv(2).I16(0),
			`{"flag":false,"small":0,"port":0,"count":0,"id":0,"name":null,"blob":null,"uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":null,"epoch":0,"hint":42,"note":"hi"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, n, err := p.Decode(testMsg, c.version, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(c.in) {
				t.Errorf("used %d of %d bytes", n, len(c.in))
			}
			got := string(p.AppendJSON(nil, v))
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

// A Decoder reused across messages, small and large, decodes each one
// right, and a slab that fills keeps the values already handed out.
func TestDecoderReuse(t *testing.T) {
	big := b{}.I8(1).I8(-2).I16(-1).I32(-1).I64(-5).Str("n").I32(-1).I32(3)
	var ints []string
	for j := 0; j < 40; j++ {
		ints = append(ints, strconv.Itoa(j))
	}
	pairJSON := `{"topic":"t","partitions":[` + strings.Join(ints, ",") + `]}`
	for i := 0; i < 3; i++ {
		big = big.Str("t").I32(40)
		for j := 0; j < 40; j++ {
			big = big.I32(int32(j))
		}
	}
	bigJSON := `{"flag":true,"small":-2,"port":65535,"count":4294967295,"id":-5,"name":"n","blob":null,"pairs":[` +
		pairJSON + "," + pairJSON + "," + pairJSON + `]}`
	small := append(b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(0).Uv(0), make([]byte, 16)...).Uv(0).I16(0).Uv(1).Uv(0).Uv(4).I32(42)
	smallJSON := `{"flag":false,"small":0,"port":0,"count":0,"id":0,"name":null,"blob":null,"uuid":"AAAAAAAAAAAAAAAAAAAAAA","pairs":null,"epoch":0,"hint":42}`
	var d p.Decoder
	for _, in := range []struct {
		version int16
		in      b
		want    string
	}{{2, small, smallJSON}, {0, big, bigJSON}, {2, small, smallJSON}, {0, big, bigJSON}} {
		v, _, err := d.Decode(testMsg, in.version, in.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(p.AppendJSON(nil, v)); got != in.want {
			t.Fatalf("got  %s\nwant %s", got, in.want)
		}
	}
}

// Every prefix of a valid input must fail cleanly, never panic or succeed.
func TestDecodeTruncated(t *testing.T) {
	in := b{}.I8(1).I8(-2).I16(-1).I32(-1).I64(-5).Str("name").I32(2).I16(1).I32(1).Str("t").I32(2).I32(0).I32(7)
	if _, _, err := p.Decode(testMsg, 0, in); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(in); i++ {
		_, _, err := p.Decode(testMsg, 0, in[:i])
		if !errors.Is(err, p.ErrShort) {
			t.Fatalf("prefix %d: %v", i, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int16
		in      b
		want    string
	}{
		// Above the range, the words of the UnsupportedVersionException
		// Kafka's generated read throws, which its coordinator decoders print.
		{"version past the newest", 3, nil, "Can't read version 3 of Test"},
		{"negative version", -1, nil, "unsupported Test version -1"},
		{"non-nullable null", 0, b{}.I8(0).I8(0).I16(0).I32(0).I64(0).I16(-1), "non-nullable name is null"},
		{"array count beyond input", 0, b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Str("").I32(-1).I32(1 << 30), "claims 1073741824 elements"},
		{"varint too long", 2, b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(1 << 35), "longer than 5 bytes"},
		{"tagged field overrun", 2, append(b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(0).Uv(0), make([]byte, 16)...).Uv(0).I16(0).Uv(1).Uv(0).Uv(9).I32(1), "need 9 bytes"},
		{"tagged field leftover", 2, append(b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(0).Uv(0), make([]byte, 16)...).Uv(0).I16(0).Uv(1).Uv(0).Uv(5).I32(1).I8(0), "1 bytes left over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := p.Decode(testMsg, c.version, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          `"plain"`,
		`q"b\s/`:         `"q\"b\\s/"`,
		"\b\t\n\f\r\x01": `"\b\t\n\f\r\u0001"`,
		"\x1f é \u2028":  "\"\\u001F é \u2028\"",
	} {
		if got := string(p.AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
	// Not U+FFFD, as Java's decoder would write: the bytes, marked.
	if got := string(p.AppendStringBytes(nil, []byte{'a', 0xff, 'b'})); got != `{"base64":"Yf9i"}` {
		t.Errorf("invalid UTF-8: %s", got)
	}
	if got := string(p.AppendString(nil, "a\xffb")); got != `{"base64":"Yf9i"}` {
		t.Errorf("invalid UTF-8 string: %s", got)
	}
}

func TestCoordinatorFormat(t *testing.T) {
	c := p.Coordinator{
		7: {Key: &p.Message{Name: "K", Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{p.F("group", p.String, p.Since(0))}}},
			Value: &p.Message{Name: "V", Valid: p.Versions{Min: 0, Max: 1}, Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{p.F("n", p.Int32, p.Since(0))}}}},
	}
	key := b{}.I16(7).Str("g")
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       p.Formatted
		err        string
	}{
		{"record", key, b{}.I16(1).I32(5), p.Formatted{Key: `{"type":"7","data":{"group":"g"}}`, Value: `{"version":"1","data":{"n":5}}`, HasValue: true}, ""},
		{"tombstone", key, nil, p.Formatted{Key: `{"type":"7","data":{"group":"g"}}`, Value: "<DELETE>", HasValue: true}, ""},
		{"missing key", nil, nil, p.Formatted{Key: "Failed to decode message at offset 9 using the specified decoder (message had a missing key)"}, "missing key"},
		{"unknown type", b{}.I16(3), nil, p.Formatted{Key: "Unknown record type 3 at offset 9, skipping."}, "unknown record type 3"},
		{"short key", b{1}, nil, p.Formatted{Key: "Error at offset 9, skipping. Could not read version from key's buffer."}, "version"},
		{"bad value version", key, b{}.I16(4).I32(5), p.Formatted{Key: "Error at offset 9, skipping. Could not read record with version 4 from value's buffer due to: Can't read version 4 of V."}, "Can't read version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Format(tc.key, tc.value, 9)
			if (got.Err == nil) != (tc.err == "") || (got.Err != nil && !strings.Contains(got.Err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", got.Err, tc.err)
			}
			got.Err = nil
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestNullableStruct: a nullable struct field carries a marker byte before
// its fields, negative for null.
func TestNullableStruct(t *testing.T) {
	m := &p.Message{Name: "N", Flexible: p.Since(0), Struct: p.Struct{Fields: []p.Field{
		p.F("inner", p.Nested, p.Since(0)).Null(p.Since(0)).Of(&p.Struct{Fields: []p.Field{p.F("n", p.Int32, p.Since(0))}}),
	}}}
	for in, want := range map[string]string{
		string(b{}.I8(-1).Uv(0)):             `{"inner":null}`,
		string(b{}.I8(1).I32(9).Uv(0).Uv(0)): `{"inner":{"n":9}}`,
	} {
		v, n, err := p.Decode(m, 0, []byte(in))
		if err != nil || n != len(in) {
			t.Fatalf("%x: used %d, %v", in, n, err)
		}
		if got := string(p.AppendJSON(nil, v)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
