package compact

// legacyRule decides whether a pass keeps the tombstones of magic 0 and 1
// records, which have no delete horizon of their own.
//
// When the partition's cleaner-checkpoint records when the pass that reached
// the first dirty offset ran, every record below that offset has been in the
// clean section at least since then; once that time is a delete retention
// old, the tombstones below it may go, the guarantee KIP-534 gives v2
// batches. Otherwise Kafka's rule applies: the horizon is the modification
// time of the last segment of the clean section minus the delete retention,
// and tombstones in segments modified at or before it go (Cleaner.doClean's
// legacyDeleteHorizonMs).
type legacyRule struct {
	known      bool
	expired    bool  // known: now is a delete retention past the last clean
	firstDirty int64 // known: the end of the clean section
	horizon    int64 // unknown: legacyDeleteHorizonMs
}

func newLegacyRule(segs []segment, firstDirty, cleanTime int64, o *Options) legacyRule {
	if cleanTime >= 0 {
		return legacyRule{known: true, firstDirty: firstDirty, expired: o.Now-o.DeleteRetention >= cleanTime}
	}
	var horizon int64
	if i, j := span(segs, 0, firstDirty); j > i {
		horizon = segs[j-1].LastModified - o.DeleteRetention
	}
	return legacyRule{horizon: horizon}
}

// mayDrop reports whether any legacy tombstone of s may go.
func (l legacyRule) mayDrop(s *segment) bool {
	if l.known {
		return l.expired && s.Base < l.firstDirty
	}
	return s.LastModified <= l.horizon
}

// retainDelete reports whether a legacy tombstone at offset in s stays.
func (l legacyRule) retainDelete(s *segment, offset int64) bool {
	if l.known {
		return !l.expired || offset >= l.firstDirty
	}
	return s.LastModified > l.horizon
}
