package index

import "fmt"

// OffsetIndexBytes encodes the offset entries as a trimmed .index file.
func (r *Recovery) OffsetIndexBytes() ([]byte, error) {
	b := make([]byte, 0, len(r.Offsets)*OffsetEntrySize)
	var err error
	for _, e := range r.Offsets {
		if b, err = AppendOffsetEntry(b, r.Base, e); err != nil {
			return nil, fmt.Errorf("offset index entry %+v: %w", e, err)
		}
	}
	return b, nil
}

// TimeIndexBytes encodes the time entries as a trimmed .timeindex file.
func (r *Recovery) TimeIndexBytes() ([]byte, error) {
	b := make([]byte, 0, len(r.Times)*TimeEntrySize)
	var err error
	for _, e := range r.Times {
		if b, err = AppendTimeEntry(b, r.Base, e); err != nil {
			return nil, fmt.Errorf("time index entry %+v: %w", e, err)
		}
	}
	return b, nil
}
