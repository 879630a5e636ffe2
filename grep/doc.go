// Package grep finds the stored versions of keys in partition directories,
// says what each is to its key, and audits the erasure deadlines of KIP-354
// (max.compaction.lag.ms): where on a disk is this key's data, and is any
// deleted or overwritten version of it older than the deadline?
//
// # Statuses
//
// Versions of a key are ordered by offset, and the newest wins, as the log
// cleaner decides (Cleaner.shouldRetainRecord keeps a record only when its
// offset is at least the one its key has in the offset map, which the
// newest puts there). Only records that are committed or outside any
// transaction are versions: the cleaner leaves aborted batches out of its
// map (buildOffsetMap), so an aborted record supersedes nothing, and it
// never reaches a transaction without a marker (nothing at or past the last
// stable offset is cleaned), so an undecided one supersedes nothing yet.
// Control records are neither versions nor matches. Then a matched record is
//
//   - aborted or ongoing, when its transaction aborted or has no marker;
//   - latest, when it is its key's newest version, or has no key (nothing
//     supersedes a keyless record; the cleaner drops such records from a
//     compacted topic whenever it cleans them);
//   - tombstone, when it is its key's newest version and its value is null;
//   - superseded, when a newer version exists and the newest has a value;
//   - deleted, when a newer version exists and the newest is a tombstone.
//
// A status is the partition's: the whole log counts, from its first
// segment (records below the log start offset are still on disk), whatever
// the range searched.
//
// # How
//
// A key pass reads every batch of the log, only the keys of its records
// (logfmt.RecordIter.NextKey), and puts the newest version of each wanted
// key in a map that is the compact package's offset map (compact.KeyMap): a
// key digest and the version's offset, with two bits saying whether it is a
// tombstone and, in an audit, one past its deadline. The wanted keys are
// those the key matchers accept; without key matchers, a find pass over the
// range first collects the keys of the records that match (values are read
// by NextKey too; headers need a full decode); in an audit without matchers,
// every key. A match pass then decodes the batches of the range that may
// match (those the earlier passes saw a wanted key or a match in) and
// renders each match with the status the map gives. The find and key
// passes, which read every batch, give units of whole batches (about 2 MiB,
// at most 32,768 records) to goroutines that read, check and work on a
// unit whole while its bytes are in their core's cache; the match pass reads each segment
// through a logfmt.DeepReader, whose workers run its work on a batch. The
// partition's goroutine takes the results in order. Transactions are
// resolved from their markers by package fetch, whose read of the batch
// headers cuts the units. With key matchers the key pass reads units cut
// by the indexes (fetch.Plan), whose reading stands in for that read on a
// log without transactions; at the first transactional batch the read
// starts alongside, and the versions of transactional batches wait until it
// has met their markers. A batch without the bytes of one or two exact keys
// sought is not read further.
//
// Memory is the key map (24 bytes a key, growing as needed up to a limit;
// twice that with a find pass), a read window per goroutine, the units
// read ahead of their turn with their versions, the match pass's windows
// and batches in its workers' hands with their lines, and a few chunks of
// output waiting their turn to be written: it does not grow with the size
// of a segment.
//
// # The audit
//
// With an Audit, a superseded or deleted match whose first newer version
// was written more than max.compaction.lag.ms ago, and a tombstone match
// written more than max.compaction.lag.ms + delete.retention.ms ago, is a
// Finding (compact.VersionDeadline, compact.TombstoneDeadline). The match
// pass meets the first newer version after the match, reading on past the
// range when it must. Without matchers, the key pass alone audits every key:
// it meets every version together with the one that supersedes it, and
// reports how many are past their deadline and the oldest of them.
package grep
