package protocol

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// b builds test inputs.
type b []byte

func (x b) i8(v int8) b    { return append(x, byte(v)) }
func (x b) i16(v int16) b  { return binary.BigEndian.AppendUint16(x, uint16(v)) }
func (x b) i32(v int32) b  { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b  { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) uv(v int) b     { return binary.AppendUvarint(x, uint64(v)) }
func (x b) str(s string) b { return append(x.i16(int16(len(s))), s...) }
func (x b) cstr(s string) b {
	return append(x.uv(len(s)+1), s...)
}

var (
	pair = &Struct{Fields: []Field{
		F("topic", String, Since(0)),
		F("partitions", Int32, Since(0)).Arr(),
	}}
	testMsg = &Message{Name: "Test", Valid: Versions{Min: 0, Max: 2}, Flexible: Since(2), Struct: Struct{Fields: []Field{
		F("flag", Bool, Since(0)),
		F("small", Int8, Since(0)),
		F("port", Uint16, Since(0)),
		F("count", Uint32, Since(0)),
		F("id", Int64, Since(0)),
		F("name", String, Since(0)).Null(Since(1)),
		F("blob", Bytes, Since(0)).Null(Since(0)),
		F("uuid", UUID, Since(1)),
		F("pairs", Nested, Since(0)).Arr().Null(Since(0)).Of(pair),
		F("epoch", Int16, Since(1)),
		F("hint", Int32, Since(2)).TaggedAs(0, Since(2), -1),
		F("note", String, Since(2)).Null(Since(2)).TaggedAs(1, Since(2), 0).NullDefault(),
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
			b{}.i8(1).i8(-2).i16(-1).i32(-1).i64(-5).str("a\"b\n").i32(-1).i32(1).str("t").i32(2).i32(0).i32(7),
			`{"flag":true,"small":-2,"port":65535,"count":4294967295,"id":-5,"name":"a\"b\n","blob":null,"pairs":[{"topic":"t","partitions":[0,7]}]}`},
		{"v1 null string and array, uuid", 1,
			append(b{}.i8(0).i8(0).i16(9093).i32(0).i64(0).i16(-1).i32(2).i16(0x6869), uuid...).i32(-1).i16(3),
			`{"flag":false,"small":0,"port":9093,"count":0,"id":0,"name":null,"blob":"aGk=","uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":null,"epoch":3}`},
		{"v2 flexible, tagged fields at default", 2,
			append(b{}.i8(2).i8(1).i16(1).i32(1).i64(1).cstr("x").uv(1), uuid...).uv(2).cstr("t").uv(1).uv(0).i16(4).uv(0),
			`{"flag":true,"small":1,"port":1,"count":1,"id":1,"name":"x","blob":"","uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":[{"topic":"t","partitions":[]}],"epoch":4}`},
		{"v2 tagged fields set, unknown tag skipped", 2,
			append(b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(0).uv(0), uuid...).uv(0).i16(0).
				uv(3).uv(0).uv(4).i32(42).uv(1).uv(3).cstr("hi").uv(9).uv(2).i16(0),
			`{"flag":false,"small":0,"port":0,"count":0,"id":0,"name":null,"blob":null,"uuid":"AAAAAAAAAAAAAAAAAAAAAQ","pairs":null,"epoch":0,"hint":42,"note":"hi"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, n, err := Decode(testMsg, c.version, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(c.in) {
				t.Errorf("used %d of %d bytes", n, len(c.in))
			}
			got := string(AppendJSON(nil, v))
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
	big := b{}.i8(1).i8(-2).i16(-1).i32(-1).i64(-5).str("n").i32(-1).i32(3)
	var ints []string
	for j := 0; j < 40; j++ {
		ints = append(ints, strconv.Itoa(j))
	}
	pairJSON := `{"topic":"t","partitions":[` + strings.Join(ints, ",") + `]}`
	for i := 0; i < 3; i++ {
		big = big.str("t").i32(40)
		for j := 0; j < 40; j++ {
			big = big.i32(int32(j))
		}
	}
	bigJSON := `{"flag":true,"small":-2,"port":65535,"count":4294967295,"id":-5,"name":"n","blob":null,"pairs":[` +
		pairJSON + "," + pairJSON + "," + pairJSON + `]}`
	small := append(b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(0).uv(0), make([]byte, 16)...).uv(0).i16(0).uv(1).uv(0).uv(4).i32(42)
	smallJSON := `{"flag":false,"small":0,"port":0,"count":0,"id":0,"name":null,"blob":null,"uuid":"AAAAAAAAAAAAAAAAAAAAAA","pairs":null,"epoch":0,"hint":42}`
	var d Decoder
	for _, in := range []struct {
		version int16
		in      b
		want    string
	}{{2, small, smallJSON}, {0, big, bigJSON}, {2, small, smallJSON}, {0, big, bigJSON}} {
		v, _, err := d.Decode(testMsg, in.version, in.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendJSON(nil, v)); got != in.want {
			t.Fatalf("got  %s\nwant %s", got, in.want)
		}
	}
}

// Every prefix of a valid input must fail cleanly, never panic or succeed.
func TestDecodeTruncated(t *testing.T) {
	in := b{}.i8(1).i8(-2).i16(-1).i32(-1).i64(-5).str("name").i32(2).i16(1).i32(1).str("t").i32(2).i32(0).i32(7)
	if _, _, err := Decode(testMsg, 0, in); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(in); i++ {
		_, _, err := Decode(testMsg, 0, in[:i])
		if !errors.Is(err, ErrShort) {
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
		{"unsupported version", 3, nil, "unsupported Test version 3"},
		{"non-nullable null", 0, b{}.i8(0).i8(0).i16(0).i32(0).i64(0).i16(-1), "non-nullable name is null"},
		{"array count beyond input", 0, b{}.i8(0).i8(0).i16(0).i32(0).i64(0).str("").i32(-1).i32(1 << 30), "claims 1073741824 elements"},
		{"varint too long", 2, b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(1 << 35), "longer than 5 bytes"},
		{"tagged field overrun", 2, append(b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(0).uv(0), make([]byte, 16)...).uv(0).i16(0).uv(1).uv(0).uv(9).i32(1), "need 9 bytes"},
		{"tagged field leftover", 2, append(b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(0).uv(0), make([]byte, 16)...).uv(0).i16(0).uv(1).uv(0).uv(5).i32(1).i8(0), "1 bytes left over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Decode(testMsg, c.version, c.in)
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
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
	// Not U+FFFD, as Java's decoder would write: the bytes, marked.
	if got := string(AppendStringBytes(nil, []byte{'a', 0xff, 'b'})); got != `{"base64":"Yf9i"}` {
		t.Errorf("invalid UTF-8: %s", got)
	}
	if got := string(AppendString(nil, "a\xffb")); got != `{"base64":"Yf9i"}` {
		t.Errorf("invalid UTF-8 string: %s", got)
	}
}

func TestCoordinatorFormat(t *testing.T) {
	c := Coordinator{
		7: {Key: &Message{Name: "K", Flexible: Never, Struct: Struct{Fields: []Field{F("group", String, Since(0))}}},
			Value: &Message{Name: "V", Valid: Versions{Min: 0, Max: 1}, Flexible: Never, Struct: Struct{Fields: []Field{F("n", Int32, Since(0))}}}},
		8: {},
	}
	key := b{}.i16(7).str("g")
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       Formatted
		err        string
	}{
		{"record", key, b{}.i16(1).i32(5), Formatted{Key: `{"type":"7","data":{"group":"g"}}`, Value: `{"version":"1","data":{"n":5}}`, HasValue: true}, ""},
		{"tombstone", key, nil, Formatted{Key: `{"type":"7","data":{"group":"g"}}`, Value: "<DELETE>", HasValue: true}, ""},
		{"raw type", b{}.i16(8).i8(1), b{}.i16(0).i8(2), Formatted{Key: `{"type":"8","raw":"AQ=="}`, Value: `{"version":"0","raw":"Ag=="}`, HasValue: true}, ""},
		{"missing key", nil, nil, Formatted{Key: "Failed to decode message at offset 9 using the specified decoder (message had a missing key)"}, "missing key"},
		{"unknown type", b{}.i16(3), nil, Formatted{Key: "Unknown record type 3 at offset 9, skipping."}, "unknown record type 3"},
		{"short key", b{1}, nil, Formatted{Key: "Error at offset 9, skipping. Could not read version from key's buffer."}, "version"},
		{"bad value version", key, b{}.i16(4).i32(5), Formatted{Key: "Error at offset 9, skipping. Could not read record with version 4 from value's buffer due to: unsupported V version 4."}, "unsupported"},
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
	m := &Message{Name: "N", Flexible: Since(0), Struct: Struct{Fields: []Field{
		F("inner", Nested, Since(0)).Null(Since(0)).Of(&Struct{Fields: []Field{F("n", Int32, Since(0))}}),
	}}}
	for in, want := range map[string]string{
		string(b{}.i8(-1).uv(0)):             `{"inner":null}`,
		string(b{}.i8(1).i32(9).uv(0).uv(0)): `{"inner":{"n":9}}`,
	} {
		v, n, err := Decode(m, 0, []byte(in))
		if err != nil || n != len(in) {
			t.Fatalf("%x: used %d, %v", in, n, err)
		}
		if got := string(AppendJSON(nil, v)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
