package grep

import (
	"testing"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/textdec"
)

// TestUnaudited: only a compacted topic with a max lag has an erasure
// deadline to audit.
func TestUnaudited(t *testing.T) {
	for _, c := range []struct {
		cfg  compact.Config
		want string
	}{
		{compact.Config{Compact: true, Policy: "compact", MaxLag: 1000}, ""},
		{compact.Config{Compact: true, Policy: "compact,delete", MaxLag: 1000}, ""},
		{compact.Config{Policy: "delete", MaxLag: 1000}, "cleanup.policy=delete: no erasure deadline applies"},
		{compact.Config{Compact: true, Policy: "compact", MaxLag: compact.Unlimited}, "max.compaction.lag.ms is unlimited: no erasure deadline applies"},
	} {
		if got := Unaudited(c.cfg); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}

// TestNewFormat: keys and values are text, but base64 in JSON, where
// binary data must survive.
func TestNewFormat(t *testing.T) {
	if f := NewFormat(false, 80); f.KeyDecoder != textdec.String || f.ValueDecoder != textdec.String || f.Width != 80 {
		t.Errorf("text: %+v", f)
	}
	if f := NewFormat(true, 0); f.KeyDecoder != textdec.Base64 || f.ValueDecoder != textdec.Base64 || !f.JSON {
		t.Errorf("JSON: %+v", f)
	}
}
