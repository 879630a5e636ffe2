package dump

import "testing"

// TestPayloadOf: several payload decoders named take Kafka's precedence,
// offsets, transaction log, cluster metadata, remote log metadata, share
// group state.
func TestPayloadOf(t *testing.T) {
	for _, c := range []struct {
		flags [5]bool
		want  Payload
	}{
		{[5]bool{}, PayloadPlain},
		{[5]bool{true, true, true, true, true}, PayloadOffsets},
		{[5]bool{false, true, true, true, true}, PayloadTxnLog},
		{[5]bool{false, false, true, true, true}, PayloadMetadata},
		{[5]bool{false, false, false, true, true}, PayloadRemoteMeta},
		{[5]bool{false, false, false, false, true}, PayloadShareState},
	} {
		f := c.flags
		if got := PayloadOf(f[0], f[1], f[2], f[3], f[4]); got != c.want {
			t.Errorf("PayloadOf%v = %d, want %d", f, got, c.want)
		}
	}
}
