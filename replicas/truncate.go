package replicas

import "github.com/logtool/logtool/logfmt/checkpoint"

// The truncation a follower goes through when it starts fetching from a new
// leader, as Kafka does it (AbstractFetcherThread.truncateToEpochEndOffsets
// and getOffsetTruncationState, the leader answering from
// LeaderEpochFileCache.endOffsetFor):
//
//   - a follower with no leader epoch truncates to its high watermark;
//   - otherwise it asks the leader for the end offset of its latest epoch
//     (OffsetsForLeaderEpoch). The leader answers with the largest epoch it
//     knows at or below the one asked, and the start offset of its next
//     epoch, or its log end offset when the epoch asked is its latest.
//   - If the follower knows the epoch answered, it truncates to the least of
//     its own end offset for that epoch, the leader's answer and its log end
//     offset, and is done. If not, it truncates to its own end offset for the
//     answered epoch (the largest epoch of its own below it) and asks again
//     with its new latest epoch. A follower whose epochs all lie above the
//     answer truncates to the leader's end offset.
//
// A leader elected starts a new epoch, above every epoch before, at its log
// end offset (Partition.makeLeader assigns it in the epoch cache), so the
// leader's cache here is its own with that epoch added.

const undefined = -1

// endOffsetFor is LeaderEpochFileCache.endOffsetFor.
func endOffsetFor(epochs []checkpoint.EpochEntry, requested int32, logEnd int64) (int32, int64) {
	if requested == undefined {
		return undefined, undefined
	}
	n := len(epochs)
	if n > 0 && epochs[n-1].Epoch == requested {
		return requested, logEnd
	}
	// higher: the first entry above the epoch asked; floor: the last at or
	// below it.
	higher, floor := -1, -1
	for i, e := range epochs {
		if e.Epoch > requested {
			higher = i
			break
		}
		floor = i
	}
	switch {
	case higher < 0:
		return undefined, undefined
	case floor < 0:
		return requested, epochs[higher].StartOffset
	}
	return epochs[floor].Epoch, epochs[higher].StartOffset
}

// leaderCache is the leader's epoch cache once it leads: its own, and the new
// epoch from its log end offset.
func leaderCache(l *Partition, newEpoch int32) []checkpoint.EpochEntry {
	es := append([]checkpoint.EpochEntry(nil), l.Epochs...)
	return append(es, checkpoint.EpochEntry{Epoch: newEpoch, StartOffset: l.LogEndOffset})
}

// truncateTo is the offset follower f would truncate its log to when it
// fetched from leader l, whose cache is leaderEpochs.
func truncateTo(f *Partition, l *Partition, leaderEpochs []checkpoint.EpochEntry) int64 {
	epochs := append([]checkpoint.EpochEntry(nil), f.Epochs...)
	leo := f.LogEndOffset
	for {
		if len(epochs) == 0 {
			return min(f.HighWatermark, leo)
		}
		lEpoch, lEnd := endOffsetFor(leaderEpochs, epochs[len(epochs)-1].Epoch, l.LogEndOffset)
		if lEnd == undefined {
			// The leader knows no epoch this high: Kafka keeps the
			// initial fetch offset, the follower's log end.
			return leo
		}
		fEpoch, fEnd := endOffsetFor(epochs, lEpoch, leo)
		if fEnd == undefined {
			return min(lEnd, leo)
		}
		if fEpoch != lEpoch {
			leo = min(fEnd, leo)
			epochs = truncateFromEnd(epochs, leo)
			continue
		}
		return min(fEnd, lEnd, leo)
	}
}

// truncateFromEnd is LeaderEpochFileCache.truncateFromEnd: the entries
// starting at or past end go.
func truncateFromEnd(es []checkpoint.EpochEntry, end int64) []checkpoint.EpochEntry {
	for len(es) > 0 && es[len(es)-1].StartOffset >= end {
		es = es[:len(es)-1]
	}
	return es
}
