package logfmt

import "fmt"

// RootCause returns the error to report for err, a framing error a header
// reader met at byte end of the segment at path: the first batch before
// end whose checksum fails, when there is one. A damaged length field
// frames the batches after it wrongly, and the framing error it leads to
// can lie far from the damage; a reader of headers alone does not see the
// checksum that names it. err is returned as it is when no batch before it
// fails, or the segment does not read again.
func RootCause(err error, path string, end int64) error {
	ce, ok := AsCorrupt(err)
	if !ok {
		return err
	}
	seg, oerr := OpenSegment(path)
	if oerr != nil {
		return err
	}
	defer seg.Close()
	for seg.Next() && seg.Batch().Pos < end {
		b := seg.Batch()
		if verr := b.Validate(); verr != nil {
			cause, _ := AsCorrupt(WithFile(verr, path, 0))
			after := ce.Msg
			if ce.Pos >= 0 {
				after += fmt.Sprintf(" at byte %d", ce.Pos)
			}
			return Corruptf(path, cause.Pos, "%s; the batches after it do not frame (%s)", cause.Msg, after)
		}
	}
	return err
}
