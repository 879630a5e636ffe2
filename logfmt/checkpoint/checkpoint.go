// Package checkpoint reads and writes the small text and JSON files that sit
// next to Kafka's segments: the four offset checkpoints at the root of a log
// directory, each partition's leader-epoch-checkpoint and partition.metadata,
// the log directory's meta.properties, KRaft's quorum-state, and logtool's own
// per-partition cleaner-checkpoint.
//
// Readers follow Kafka's own readers rule for rule, so that a file is
// accepted when a broker would accept it; the few places where a reader is
// stricter are named in its documentation. Writers produce the bytes a broker
// writes. Bad input is reported as a *logfmt.CorruptError whose Pos is the
// byte offset of the offending line. The files' names are in logfmt/layout.
package checkpoint
