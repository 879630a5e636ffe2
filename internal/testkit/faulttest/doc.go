// Package faulttest holds logtool's end-to-end fault tests (the reliability
// campaign of issue 8): tests that drive whole commands in-process, through
// commands.Run, against generated log directories that are damaged,
// interrupted, locked by another process or built to be hostile, and check
// the promises every command makes:
//
//   - Corruption matrix: for every magic and the codecs valid for it, one
//     damaged byte of each kind (offset, length, magic, CRC, attributes,
//     record varints, compressed payload, .index and .timeindex entries,
//     checkpoint lines) and cuts at many positions. verify --deep --strict
//     finds each one (exit 3); dump reports it with a byte position and
//     goes on; reindex, upgrade and compact stop with the file and position
//     (exit 1) and leave the .log files as they were.
//   - Crash injection: every write step of reindex, upgrade,
//     migrate-checkpoints, compact and retention made to fail, and that step
//     and all later ones, as a process that dies there (safefile.Faults).
//     After the crash, and after a re-run without faults, the records (every
//     offset, key, value, header and timestamp) are exactly the old or the
//     new ones, verify is clean, and no .cleaned, .swap or .deleted file is
//     left.
//   - Broker lock: with another process holding the fcntl lock of .lock, every
//     writing command exits 4 and changes nothing; read-only commands warn and
//     proceed.
//   - Hostile input: a 2 GB declared batch length, decompression bombs of
//     every codec, varint overruns, checkpoints with millions of lines or
//     path-traversing topic names: bounded memory, one clear error line, no
//     panic.
//
// The package holds tests only; the long runs (every format, every crash
// step, peak RSS of the built binary) are enabled with LOGTOOL_LONG=1 and
// described in docs/reliability.md.
package faulttest
