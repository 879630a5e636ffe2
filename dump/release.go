package dump

import (
	"fmt"
	"regexp"
	"strings"
)

// Release is how kafka-dump-log.sh of one Kafka release line prints the
// lines that changed between the releases logtool follows. Each field says
// where a release departs from the newest layout, so the zero Release is
// the newest one.
//
// What every release from 3.7 to 4.1 prints alike needs no field: the
// "Non-consecutive offsets" pairs newest first, "crc: N}" at the end of a
// legacy record line, and " payload:" without the bar when
// --skip-record-metadata leaves a record without its key. The Java port of
// the tool (after 4.2) changed the three, and also reports "-1 is followed
// by N" for every segment that does not start at offset 0, a bug logtool
// does not copy; see docs/commands/dump.md.
type Release struct {
	Version string
	// OffsetsText: --offsets-decoder prints Kafka 3.7's
	// "offset_commit::group=G,partition=T-P" and "group_metadata::group=G"
	// lines; from 3.8 on, JSON (GroupCoordinatorRecordSerde).
	OffsetsText bool
	// TxnLogText: --transaction-log-decoder prints
	// "transaction_metadata::transactionalId=..." lines (3.7 to 3.9); from
	// 4.0 on, JSON with transactionStatus as a number.
	TxnLogText bool
	// LeaderChangeType: a KRaft LeaderChange control record is
	// "controlType: LEADER_CHANGE(2)"; from 4.1 on, "LeaderChange: {json}".
	LeaderChangeType bool
}

// releases are the release lines whose layouts dump repeats, oldest first;
// the last is the default. Each was read in Kafka's DumpLogSegments and the
// code it calls (docs/commands/dump.md says what was read where).
var releases = []Release{
	{Version: "3.7", OffsetsText: true, TxnLogText: true, LeaderChangeType: true},
	{Version: "3.8", TxnLogText: true, LeaderChangeType: true},
	{Version: "3.9", TxnLogText: true, LeaderChangeType: true},
	{Version: "4.0", LeaderChangeType: true},
	{Version: "4.1"},
}

// Releases lists the versions ParseRelease takes, oldest first.
func Releases() []string {
	v := make([]string, len(releases))
	for i, r := range releases {
		v[i] = r.Version
	}
	return v
}

// DefaultRelease is the newest release line.
func DefaultRelease() Release { return releases[len(releases)-1] }

var releaseSyntax = regexp.MustCompile(`^([0-9]+\.[0-9]+)(\.[0-9]+)?$`)

// ParseRelease returns the layout of a release line, "X.Y"; a full version
// "X.Y.Z" names its line.
func ParseRelease(s string) (Release, error) {
	if m := releaseSyntax.FindStringSubmatch(s); m != nil {
		for _, r := range releases {
			if r.Version == m[1] {
				return r, nil
			}
		}
	}
	return Release{}, fmt.Errorf("%q is not a Kafka release whose lines logtool knows; it knows %s", s, strings.Join(Releases(), ", "))
}
