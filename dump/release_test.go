package dump

import (
	"strings"
	"testing"
)

// TestParseRelease: a release line or a full version of it selects the
// line; anything else is refused with the list of lines.
func TestParseRelease(t *testing.T) {
	for in, want := range map[string]string{"3.7": "3.7", "3.9.1": "3.9", "4.0": "4.0", "4.1.0": "4.1"} {
		if r, err := ParseRelease(in); err != nil || r.Version != want {
			t.Errorf("%q: %+v %v", in, r, err)
		}
	}
	for _, in := range []string{"", "3.6", "4.2", "4", "3.9.x", " 3.9", "3.9.1.2"} {
		if _, err := ParseRelease(in); err == nil || !strings.Contains(err.Error(), "3.7, 3.8, 3.9, 4.0, 4.1") {
			t.Errorf("%q: %v", in, err)
		}
	}
	// The zero Release is the newest layout, which the default names.
	if d := DefaultRelease(); d != (Release{Version: d.Version}) || d.Version != "4.1" {
		t.Errorf("default %+v", d)
	}
}
