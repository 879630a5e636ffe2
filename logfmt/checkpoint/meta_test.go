package checkpoint

import (
	"reflect"
	"testing"
	"time"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"separators", "a=1\nb:2\nc 3\nd\t4\ne\f5", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}},
		{"blanks around separator", "a  =  1\nb \t: 2", map[string]string{"a": "1", "b": "2"}},
		{"only one separator skipped", "a==1\nb = :2", map[string]string{"a": "=1", "b": ":2"}},
		{"key only", "alone\nalso:", map[string]string{"alone": "", "also": ""}},
		{"empty key", "=v", map[string]string{"": "v"}},
		{"trailing blanks kept", "a=1 \t", map[string]string{"a": "1 \t"}},
		{"comments and blank lines", "#\n#Thu Oct 10 11:57:10 GMT 2024\n\n   \n  # indented\n!bang\nk=v\n", map[string]string{"k": "v"}},
		{"comment not continued", "#c\\\nk=v", map[string]string{"k": "v"}},
		{"continuation", "k=a\\\n   b\\\n\tc", map[string]string{"k": "abc"}},
		{"continuation CRLF", "k=a\\\r\n  b\r\nx=y", map[string]string{"k": "ab", "x": "y"}},
		{"continuation CR", "k=a\\\r  b\rx=y", map[string]string{"k": "ab", "x": "y"}},
		{"continuation then blank line", "k=a\\\n\nx=y", map[string]string{"k": "a", "x": "y"}},
		{"even backslashes do not continue", "k=a\\\\\nx=y", map[string]string{"k": `a\`, "x": "y"}},
		{"backslash at EOF dropped", "k=v\\", map[string]string{"k": "v"}},
		{"emptied line then comment", "\\\n#x=y\nk=v", map[string]string{"k": "v"}},
		{"escapes", `k=\t\n\r\f\u0041\z\=\:\#\!\\`, map[string]string{"k": "\t\n\r\fAz=:#!\\"}},
		{"escaped separators in key", `a\ b\=c\:d=v`, map[string]string{"a b=c:d": "v"}},
		{"surrogate pair", `k=\uD83D\uDE00`, map[string]string{"k": "\U0001F600"}},
		{"lone surrogate", `k=\uD83Dx`, map[string]string{"k": "\uFFFDx"}},
		{"later key wins", "k=1\nk=2", map[string]string{"k": "2"}},
		{"CR line ends", "a=1\rb=2\r", map[string]string{"a": "1", "b": "2"}},
		{"bytes beyond ASCII kept", "k=caf\xc3\xa9", map[string]string{"k": "café"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := parseProperties([]byte(tt.in), "p")
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]string)
			for k, p := range props {
				got[k] = p.value
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	tests := []struct {
		in  string
		pos int64
		err string
	}{
		{"#x\n  k=\\u00G0", 5, `malformed \uXXXX escape in value of "k"`},
		{"k=\\u12", 0, `malformed \uXXXX escape`},
		{"a=1\n\\u=v", 4, `malformed \uXXXX escape in key`},
	}
	for _, tt := range tests {
		_, err := parseProperties([]byte(tt.in), "p")
		checkCorrupt(t, err, "p", tt.pos, tt.err)
	}
}

func TestPropertyEscapingRoundTrip(t *testing.T) {
	pairs := map[string]string{
		"":                  "",
		" lead":             " lead and inner ",
		"k=:#!\\":           "v=:#!\\",
		"tab\tnl\ncr\rff\f": "tab\tnl\ncr\rff\f",
		"café":              "\x0b\x01\x7f",
		"#comment-like":     "!bang",
	}
	var b []byte
	for k, v := range pairs {
		b = appendProperty(b, k, v)
	}
	props, err := parseProperties(b, "")
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string)
	for k, p := range props {
		got[k] = p.value
	}
	if !reflect.DeepEqual(got, pairs) {
		t.Fatalf("round trip through %q gave %q, want %q", b, got, pairs)
	}
	if got := string(appendProperty(nil, "a b", " x y")); got != "a\\ b=\\ x y\n" {
		t.Fatalf("appendProperty = %q", got)
	}
}

func TestReadMetaProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want MetaProperties
		pos  int64
		err  string
	}{
		{name: "v0", in: "#\n#Mon Mar 02 09:15:00 CET 2020\nversion=0\nbroker.id=0\n",
			want: MetaProperties{Version: 0, BrokerID: 0, NodeID: -1}},
		{name: "v0 with cluster", in: "cluster.id=Zm9vYmFyYmF6cXV4cXV1eA\nversion=0\nbroker.id=1001\n",
			want: MetaProperties{Version: 0, BrokerID: 1001, NodeID: -1, ClusterID: "Zm9vYmFyYmF6cXV4cXV1eA"}},
		{name: "no version is v0", in: "broker.id=3", want: MetaProperties{BrokerID: 3, NodeID: -1}},
		{name: "v0 without broker.id", in: "version=0", want: MetaProperties{BrokerID: -1, NodeID: -1}},
		{name: "v1", in: "node.id=1\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA\nversion=1\ncluster.id=some-cluster\n",
			want: MetaProperties{Version: 1, BrokerID: -1, NodeID: 1, ClusterID: "some-cluster", DirectoryID: "AQIDBAUGBwgJCgsMDQ4PEA"}},
		{name: "v1 empty cluster id", in: "version=1\nnode.id=2\ncluster.id=",
			want: MetaProperties{Version: 1, BrokerID: -1, NodeID: 2}},
		{name: "v2 without cluster id", in: "version=2\nnode.id=2\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA",
			want: MetaProperties{Version: 2, BrokerID: -1, NodeID: 2, DirectoryID: "AQIDBAUGBwgJCgsMDQ4PEA"}},
		{name: "version trimmed", in: "version= 1 \t\nnode.id=2\ncluster.id=c",
			want: MetaProperties{Version: 1, BrokerID: -1, NodeID: 2, ClusterID: "c"}},
		{name: "keys of other versions kept", in: "version=0\nnode.id=5\nbroker.id=4\nfoo=bar",
			want: MetaProperties{BrokerID: 4, NodeID: -1, Other: map[string]string{"node.id": "5", "foo": "bar"}}},
		{name: "v1 keeps broker.id aside", in: "version=1\nnode.id=5\nbroker.id=4\ncluster.id=c",
			want: MetaProperties{Version: 1, BrokerID: -1, NodeID: 5, ClusterID: "c", Other: map[string]string{"broker.id": "4"}}},

		{name: "version not a number", in: "a=b\nversion=one", pos: 4, err: `version "one" is not a number`},
		{name: "version 3", in: "version=3", pos: 0, err: "unknown meta.properties version 3"},
		{name: "broker.id not a number", in: "version=0\nbroker.id=x", pos: 10, err: `broker.id "x" is not an int32`},
		{name: "broker.id with trailing blank", in: "version=0\nbroker.id=1 ", pos: 10, err: `broker.id "1 " is not an int32`},
		{name: "node.id overflow", in: "version=1\ncluster.id=c\nnode.id=2147483648", pos: 23, err: "node.id \"2147483648\" is not an int32"},
		{name: "v1 without node.id", in: "version=1\ncluster.id=c", pos: -1, err: "version 1 without node.id"},
		{name: "v2 without node.id", in: "version=2", pos: -1, err: "version 2 without node.id"},
		{name: "v1 without cluster.id", in: "version=1\nnode.id=1", pos: -1, err: "version 1 without cluster.id"},
		{name: "bad directory.id", in: "version=0\ndirectory.id=nope", pos: 10, err: "bad directory.id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadMetaProperties([]byte(tt.in), "mp")
			if tt.err != "" {
				checkCorrupt(t, err, "mp", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			again, err := ReadMetaProperties(AppendMetaProperties(nil, got, time.Unix(0, 0)), "mp")
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("round trip gave %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestAppendMetaProperties(t *testing.T) {
	tests := []struct {
		m    MetaProperties
		when time.Time
		want string
	}{
		{
			MetaProperties{Version: 1, BrokerID: -1, NodeID: 1, ClusterID: "some-cluster", DirectoryID: "AQIDBAUGBwgJCgsMDQ4PEA"},
			time.Date(2024, 2, 29, 7, 5, 3, 0, time.UTC),
			"#\n#Thu Feb 29 07:05:03 UTC 2024\ncluster.id=some-cluster\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA\nnode.id=1\nversion=1\n",
		},
		{
			MetaProperties{Version: 0, BrokerID: 1001, NodeID: -1, Other: map[string]string{"a.b": "x y"}},
			time.Date(2019, 5, 4, 2, 6, 8, 0, time.FixedZone("CST", -6*3600)),
			"#\n#Sat May 04 02:06:08 CST 2019\na.b=x y\nbroker.id=1001\nversion=0\n",
		},
		{
			MetaProperties{Version: 0, BrokerID: -1, NodeID: 7},
			time.Date(2019, 5, 4, 2, 6, 8, 0, time.UTC),
			"#\n#Sat May 04 02:06:08 UTC 2019\nversion=0\n",
		},
	}
	for _, tt := range tests {
		if got := string(AppendMetaProperties(nil, tt.m, tt.when)); got != tt.want {
			t.Errorf("AppendMetaProperties(%+v) =\n%s\nwant\n%s", tt.m, got, tt.want)
		}
	}
}
