// Package reindex rebuilds and checks the index files of a partition
// directory: .index and .timeindex byte for byte as Kafka's
// LogSegment.recover writes them, .txnindex as recovery derives it from the
// transaction markers, and optionally a coarse time index.
//
// # Rebuilding
//
// Each segment's .log is read once, batch by batch ("shallow": a legacy
// compressed wrapper is one batch), and fed to index.Recovery, which holds
// the rule: an .index entry (last offset of the batch, its byte position)
// for the first batch starting more than index.interval.bytes after the last
// entry, a .timeindex entry beside it when the largest timestamp so far grew
// (that timestamp, the last offset of the first batch that reached it), and
// that entry once more at the end when it is new. Magic 0 has no timestamps,
// so its time index is empty. Like recovery, the rebuild stops at the first
// batch that does not frame, fails its checksum, or holds an offset too far
// from the base for a 4-byte relative offset; the indexes cover the batches
// before it.
//
// The .txnindex gets one entry per ABORT marker that closes an open
// transaction (see logseg.ProducerState). The producer state at a segment's
// base is rebuilt as LogLoader.recoverSegment rebuilds it: the latest readable
// producer snapshot whose offset is above the log start offset (from the log
// directory's log-start-offset-checkpoint, else 0) and at or below the base,
// then every v2 batch with a producer id from the snapshot's offset (or the
// log start) up to the base. A corrupt snapshot is skipped for an older
// one, as Kafka does. Unlike Kafka, producers are never expired by the wall
// clock. Successive segments reuse the state when they would load the same
// snapshot, so a partition is read once unless a snapshot lies inside an
// earlier segment.
//
// Only files whose bytes change are written, each through
// internal/safefile (temporary file, fsync, rename, directory fsync), so a
// crash leaves every file old or new. A .txnindex is created only for a
// segment with an aborted transaction; an existing one with nothing left to
// hold is emptied, not deleted, as recovery empties it. Before writing, an
// interrupted segment replacement (.cleaned, .swap, .deleted leftovers) is
// completed or rolled back as a broker's loader would (internal/segswap).
// Callers hold the log directory's lock (internal/lockfile) for writes.
//
// # Corrupt and torn segments
//
// A .log whose data ends before its file does (a bad checksum, a size no
// writer gives, a torn last batch, the zeros of a preallocated file) is
// indexed up to its last valid batch and reported with the position and the
// reason; recovery would truncate the rest and delete every later segment.
// The .log is modified only with Options.TruncateCorruptTail: the bytes after
// the valid batches are first copied, durably, to BackupName (the .log's
// name plus ".truncated-<position>", which no Kafka loader touches), then
// the .log is truncated in place as recovery truncates it. A backup of that
// name with other bytes stops the run (ErrBackupExists). A cut of the last
// segment lowers the log end offset; before it, what says the partition
// goes further is brought down as a broker's load does (see run.newEnd).
// An offset overflow
// is not corruption: Kafka splits that segment, so nothing is truncated.
//
// # Checking
//
// In Check mode nothing is written; each selected existing file is judged
// against the log, streaming both, and findings are graded:
//
//   - Problem: an entry that makes lookups, retention or read_committed
//     consumers go wrong. For .index: a position that is not where a batch
//     starts, entries out of order, a position past the valid data, an offset
//     not above the last offset of the batch before its position, an offset
//     that no batch up to the next entry holds. For .timeindex: entries out of
//     order, an offset past the valid data, a timestamp that no record up to
//     its offset reaches (the log does not support it), an offset past the
//     first batch that reached its timestamp. For .txnindex: a missing, extra
//     or different aborted transaction (producer, first offset, marker
//     offset). Also bytes that are no whole entry, garbage after the entries,
//     and a .log that recovery would cut. Every problem names the file, the
//     entry number and byte position, and what was expected and found.
//   - Difference: a byte difference from the rebuild that a live broker
//     legitimately makes. Its time index may record the exact offset of the
//     record holding the largest timestamp instead of its batch's last
//     offset; it counts index.interval.bytes from its last start and per
//     append, so its entries fall elsewhere (a follower's append spans
//     several batches and is indexed at its start with its last offset; old
//     leaders indexed the first offset); it appends a time entry each time it
//     closes the segment; the active segment's files end in a preallocated
//     zero-filled tail; the last stable offset in .txnindex reflects other
//     producers as the broker saw them. Differences are summarised per kind
//     with a count and the first entry concerned.
//   - Note: information, such as a missing .index (a broker recovers the
//     segment, which rebuilds both indexes), a missing .timeindex next to an
//     .index (a broker creates it empty), index files without a .log,
//     leftovers of interrupted operations.
//
// Options.Strict turns every difference and missing file into a problem.
//
// # Coarse time index
//
// With Options.Granularity the time index holds one entry per bucket of
// that width: (start of the bucket, offset of the first record whose
// timestamp enters it), buckets being entered in increasing order only,
// followed by recovery's final entry (largest timestamp, last offset of the
// first batch holding it) so that a broker still reads the segment's largest
// timestamp from the last entry, which retention and ListOffsets rely on.
// Entries stay in the standard 12-byte format and a broker reads them as
// any time index. Only batches whose largest timestamp enters a new bucket
// are decompressed.
//
// Lookups stay exact: every entry (T, O) has no record before O at or after
// T, so ListOffsets for a target t takes the greatest T not above t, finds
// O's position through the .index, and scans forward to the first batch
// whose largest timestamp reaches t; only the distance scanned grows, to
// about half a bucket of data on average and one bucket at most (plus the
// .index interval). Measured with find over 300 random targets on
// generated single-segment partitions (about 10 records per batch):
//
//	workload (log)                 time index bytes (entries)      mean scan per lookup
//	1 KiB at 100/s, 1 h (357 MiB)  recovery 590 100 B (49 175)     13 KiB, 2.3 batches
//	                               10 s    4 560 B (380)           495 KiB, 89 batches
//	                               1 m       780 B (65)            2.8 MiB, 518 batches
//	                               1 h        36 B (3)             163 MiB, 29 903 batches
//	1 KiB at 1/s, 1 day (86 MiB)   recovery 142 248 B (11 854)     13 KiB, 2.3 batches
//	                               1 m    17 304 B (1 442)         44 KiB, 7.9 batches
//	                               1 h       312 B (26)            1.8 MiB, 335 batches
//	100 B at 10/s, 1 day (116 MiB) recovery 318 060 B (26 505)     3.6 KiB, 4.9 batches
//	                               1 m    17 304 B (1 442)         47 KiB, 62 batches
//	                               1 h       312 B (26)            2.4 MiB, 3 294 batches
//
// The recovery index holds at most one entry per index.interval.bytes
// (4 KiB) of log; a coarse one holds one per bucket. It is smaller only when
// more than 4 KiB arrive per bucket, and it pays for that with a scan of
// about rate × width / 2 bytes per timestamp lookup (for v2 batches a broker
// reads only the 61-byte header of each batch it passes, so the cost is
// counted in batches rather than bytes). It suits busy partitions with long
// retention whose time index memory matters more than the latency of the
// rare lookup by time: at 100 KiB/s a one-minute index is 0.13% of the
// recovery index and a lookup passes about 500 batch headers.
//
// # Cost
//
// A scan needs the batch headers, and the records of transaction markers
// only. With Options.Workers of 2 or more it reads the .log in ranges of at
// least 2 MiB, cut where the .index says batches start, each range read,
// framed and checksummed by a worker of its own (logfmt.HeaderReader); a
// range whose cut proves wrong, damage and the end of the data are read on
// by one goroutine, as before. So a rebuild costs about one read of the
// data plus its checksums, divided among the workers. A log of batches
// under 256 bytes is read by one goroutine. Memory is a 256 KiB window and
// up to 850 KiB of headers per range in flight (twice the workers, and
// three), and 16 bytes per rebuilt entry of each index (about 8 MiB for a
// 1 GiB segment at the default interval); it does not otherwise grow with
// the segment. The coarse time index (Granularity) reads every record, in
// 256 KiB chunks on a second goroutine.
package reindex
