package clustermeta

import (
	"encoding/binary"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/kraft"
)

// Writers only the tests need: records and snapshots no command writes.

// AppendAbortTransactionRecord appends an AbortTransactionRecord (version
// 0) without a reason.
func AppendAbortTransactionRecord(dst []byte) []byte {
	return append(kraft.AppendFrame(dst, kraft.TypeAbortTransaction, 0), 0)
}

// AppendNoOpRecord appends a NoOpRecord (version 0): a controller writes one
// every half second, most of a quiet cluster's log.
func AppendNoOpRecord(dst []byte) []byte {
	return append(kraft.AppendFrame(dst, kraft.TypeNoOp, 0), 0)
}

// AppendSnapshotHeader appends a SnapshotHeaderRecord value.
func AppendSnapshotHeader(dst []byte, lastContainedLogTimestamp int64) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(lastContainedLogTimestamp))
	return append(dst, 0)
}

// AppendSnapshotFooter appends a SnapshotFooterRecord value.
func AppendSnapshotFooter(dst []byte) []byte {
	return append(binary.BigEndian.AppendUint16(dst, 0), 0)
}

// AppendSnapshot appends the contents of a snapshot file holding records: a
// header batch, the records in batches of at most batchRecords, a footer
// batch. Offsets inside a snapshot count from 0.
func AppendSnapshot(dst []byte, epoch int32, lastContainedLogTimestamp int64, batchRecords int, records [][]byte) ([]byte, error) {
	var err error
	if dst, err = kraft.AppendBatch(dst, 0, epoch, lastContainedLogTimestamp, true, logfmt.ControlSnapshotHeader, AppendSnapshotHeader(nil, lastContainedLogTimestamp)); err != nil {
		return dst, err
	}
	off := int64(1)
	for len(records) > 0 {
		n := min(batchRecords, len(records))
		if dst, err = kraft.AppendBatch(dst, off, epoch, lastContainedLogTimestamp, false, 0, records[:n]...); err != nil {
			return dst, err
		}
		off += int64(n)
		records = records[n:]
	}
	return kraft.AppendBatch(dst, off, epoch, lastContainedLogTimestamp, true, logfmt.ControlSnapshotFooter, AppendSnapshotFooter(nil))
}
