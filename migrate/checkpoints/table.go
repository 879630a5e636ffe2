package checkpoints

import (
	"bytes"
	"encoding/binary"

	"github.com/logtool/logtool/internal/extsort"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// A root file may list millions of partitions, so where a run must know
// them all, their entries are sorted on disk (internal/extsort) rather than
// held: memory stays at sortMemory whatever the files' size.
const sortMemory = 4 << 20

// reverseSource is where a reverse run takes an entry from, in order of
// precedence.
type reverseSource uint8

const (
	srcPartition reverseSource = iota // the partition's cleaner-checkpoint
	srcRoot                           // the root file
	srcMigrated                       // the .migrated file
)

// An entry is sorted as topic, 0, partition, source, ^line, offset: topic
// names hold no 0 byte (checkRootEntry), partitions are at least 0, and so
// the bytes order entries by topic, then partition, then precedence, the
// last line of a file first.
const (
	keyTail    = 1 + 4 + 1 + 4 + 8 // after the topic
	groupTail  = 1 + 4             // the partition's key ends there
	sourceTail = 4 + 8
)

func appendKey(dst []byte, e checkpoint.OffsetEntry, src reverseSource) []byte {
	dst = append(append(dst, e.Topic...), 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.Partition))
	dst = append(dst, byte(src))
	dst = binary.BigEndian.AppendUint32(dst, ^uint32(e.Line))
	return binary.BigEndian.AppendUint64(dst, uint64(e.Offset))
}

// sortedEntry is an entry as sorted.
type sortedEntry []byte

func (r sortedEntry) group() []byte         { return r[:len(r)-keyTail+groupTail] }
func (r sortedEntry) source() reverseSource { return reverseSource(r[len(r)-sourceTail-1]) }
func (r sortedEntry) line() int             { return int(^binary.BigEndian.Uint32(r[len(r)-sourceTail:])) }
func (r sortedEntry) offset() int64         { return int64(binary.BigEndian.Uint64(r[len(r)-8:])) }

func (r sortedEntry) entry() checkpoint.OffsetEntry {
	t := len(r) - keyTail
	return checkpoint.OffsetEntry{Topic: string(r[:t]), Partition: int32(binary.BigEndian.Uint32(r[t+1:])),
		Offset: r.offset(), Line: r.line()}
}

// partitionGroup is what the sorted entries of one partition say: the
// first, which wins, and the first from the root file, when there is one.
type partitionGroup struct {
	win    checkpoint.OffsetEntry
	winSrc reverseSource
	inRoot bool
	root   checkpoint.OffsetEntry // Offset and Line only
}

// eachGroup calls fn with each partition's group, in order, holding one
// group whatever the number of entries a partition has.
func eachGroup(it *extsort.Iter, fn func(*partitionGroup) error) error {
	var g partitionGroup
	var key []byte
	started := false
	for it.Next() {
		r := sortedEntry(it.Record())
		if !started || !bytes.Equal(r.group(), key) {
			if started {
				if err := fn(&g); err != nil {
					return err
				}
			}
			started, key = true, append(key[:0], r.group()...)
			g = partitionGroup{win: r.entry(), winSrc: r.source()}
		}
		if !g.inRoot && r.source() == srcRoot {
			g.inRoot, g.root = true, checkpoint.OffsetEntry{Offset: r.offset(), Line: r.line()}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if started {
		return fn(&g)
	}
	return nil
}

// lineSet is a set of line numbers, a bit each.
type lineSet []uint64

func (s *lineSet) add(line int) {
	for line/64 >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[line/64] |= 1 << (line % 64)
}

func (s lineSet) has(line int) bool {
	return line/64 < len(s) && s[line/64]&(1<<(line%64)) != 0
}
