package replicas

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Status is what a partition's replicas are to each other.
type Status string

const (
	Agree    Status = "agree"    // every offset two replicas hold, they hold alike
	Diverge  Status = "diverge"  // some offset is held differently
	Single   Status = "single"   // one broker only holds the partition
	TopicIDs Status = "topic-id" // same name, different topic IDs: a recreated topic, not replicas
)

// Verdict is the comparison of one partition's replicas.
type Verdict struct {
	Topic     string
	Partition int32
	Status    Status
	// DivergentOffset is the first offset two replicas hold differently,
	// -1 unless Status is Diverge.
	DivergentOffset int64
	// BelowHighWatermark is set when the divergent offset is below the
	// high watermark of a replica that parts there, or a replica would
	// lose records below its high watermark: data consumers may have read.
	BelowHighWatermark bool
	// Leader is the broker whose log the others would truncate to; "" when
	// the named leader holds no replica.
	Leader   string
	Replicas []Replica
	Notes    []string
	Damaged  bool
}

// Replica is one broker's replica and what would become of it.
type Replica struct {
	Broker string
	// Digest is the digest the replica was read from, "" when it was read
	// from its log directory; Partition.Source is then the directory the
	// digest was made of.
	Digest string
	*Partition
	// WouldTruncateTo is the offset Kafka's truncation would cut this
	// replica's log to, -1 when it leads or no leader is known.
	WouldTruncateTo int64
	Lost            Lost
}

// Lost is what a truncation removes: whole batches from the one holding
// WouldTruncateTo, as LogSegment.truncateTo cuts at a batch's start.
type Lost struct {
	Records                       int64 // control records included
	FirstOffset, LastOffset       int64
	FirstTimestamp, LastTimestamp int64 // the least and greatest batch max timestamps; -1 when none
	BelowHighWatermark            bool
}

// InputError is input that cannot be compared: a usage error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// RunOptions shape Run.
type RunOptions struct {
	// Leader is the broker (its node id) to take as the leader; "" picks,
	// per partition, the replica with the highest leader epoch (see
	// chooseLeader).
	Leader string
}

// Summary counts the verdicts of a run.
type Summary struct {
	Partitions, Agree, Diverge, BelowHighWatermark, Single, TopicIDs, Damaged int
}

// Failed tells whether a run found something the user must look at:
// divergence, a recreated topic, or damage.
func (s Summary) Failed() bool { return s.Diverge+s.TopicIDs+s.Damaged > 0 }

// Run merges the sources partition by partition, in PartitionKey order, so
// that only one partition's replicas are in memory at a time, and emits the
// verdict of each.
func Run(srcs []Source, o RunOptions, emit func(*Verdict) error) (Summary, error) {
	var sum Summary
	if err := checkBrokers(srcs, o); err != nil {
		return sum, err
	}
	heads := make([]*Partition, len(srcs))
	advance := func(i int) error {
		p, err := srcs[i].Next()
		if err != nil {
			return err
		}
		if p != nil && heads[i] != nil && p.Key().Compare(heads[i].Key()) <= 0 {
			return &InputError{fmt.Errorf("%s: partitions out of order: %s-%d after %s-%d", srcs[i].Broker().where(), p.Topic, p.Partition, heads[i].Topic, heads[i].Partition)}
		}
		heads[i] = p
		return nil
	}
	for i := range srcs {
		if err := advance(i); err != nil {
			return sum, err
		}
	}
	for {
		var key *PartitionKey
		for _, h := range heads {
			if h != nil && (key == nil || h.Key().Compare(*key) < 0) {
				k := h.Key()
				key = &k
			}
		}
		if key == nil {
			return sum, nil
		}
		var rs []Replica
		for i, h := range heads {
			if h != nil && h.Key() == *key {
				rs = append(rs, Replica{Broker: srcs[i].Broker().Name, Digest: srcs[i].Broker().Digest, Partition: h, WouldTruncateTo: -1})
				if err := advance(i); err != nil {
					return sum, err
				}
			}
		}
		v := judge(rs, o)
		sum.add(v)
		if err := emit(v); err != nil {
			return sum, err
		}
	}
}

func (s *Summary) add(v *Verdict) {
	s.Partitions++
	switch v.Status {
	case Agree:
		s.Agree++
	case Diverge:
		s.Diverge++
		if v.BelowHighWatermark {
			s.BelowHighWatermark++
		}
	case Single:
		s.Single++
	case TopicIDs:
		s.TopicIDs++
	}
	if v.Damaged {
		s.Damaged++
	}
}

// checkBrokers refuses sources that are not distinct brokers of one cluster.
func checkBrokers(srcs []Source, o RunOptions) error {
	if len(srcs) < 2 {
		return &InputError{errors.New("replicas compares two brokers or more: name each broker's log directories (or digest)")}
	}
	names := map[string]Broker{}
	dirs := map[string]string{}
	cluster := ""
	for _, s := range srcs {
		b := s.Broker()
		if prev, ok := names[b.Name]; ok {
			return &InputError{fmt.Errorf("%s and %s are the same broker (%s): name each broker once", prev.where(), b.where(), brokerWord(b))}
		}
		names[b.Name] = b
		for _, d := range append(slices.Clone(b.Dirs), b.DirectoryIDs...) {
			if prev, ok := dirs[d]; ok {
				return &InputError{fmt.Errorf("%s and %s are the same log directory: name each broker once", prev, b.where())}
			}
			dirs[d] = b.where()
		}
		switch {
		case b.ClusterID == "":
		case cluster == "":
			cluster = b.ClusterID
		case cluster != b.ClusterID:
			return &InputError{fmt.Errorf("%s is of cluster %s, other brokers of cluster %s: replicas of different clusters share no offsets", b.where(), b.ClusterID, cluster)}
		}
	}
	if o.Leader != "" {
		if _, ok := names[o.Leader]; !ok {
			return &InputError{fmt.Errorf("--leader %s: no such broker among the paths", o.Leader)}
		}
	}
	return nil
}

func brokerWord(b Broker) string {
	if b.NodeID >= 0 {
		return "node id " + b.Name
	}
	return b.Name
}

// judge compares the replicas of one partition and models the truncation.
func judge(rs []Replica, o RunOptions) *Verdict {
	p := rs[0].Partition
	v := &Verdict{Topic: p.Topic, Partition: p.Partition, Status: Agree, DivergentOffset: -1, Replicas: rs}
	for i := range rs {
		for _, d := range rs[i].Damage {
			v.Damaged = true
			at := ""
			if d.Pos >= 0 {
				at = fmt.Sprintf(" (at byte %d)", d.Pos)
			}
			what := ""
			if d.From >= 0 {
				to := "the log end"
				if d.To >= 0 {
					to = fmt.Sprint(d.To)
				}
				what = fmt.Sprintf("; offsets %d to %s unknown there, not compared", d.From, to)
			}
			v.Notes = append(v.Notes, fmt.Sprintf("broker %s: damaged: %s: %s%s%s", rs[i].Broker, d.File, d.Msg, at, what))
		}
	}
	if len(rs) == 1 {
		v.Status = Single
		v.Notes = append(v.Notes, "held by broker "+rs[0].Broker+" only")
		return v
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].HasTopicID && rs[0].HasTopicID && rs[i].TopicID != rs[0].TopicID {
			v.Status = TopicIDs
			var ids []string
			for _, r := range rs {
				ids = append(ids, fmt.Sprintf("broker %s: %s", r.Broker, topicID(r.Partition)))
			}
			v.Notes = append(v.Notes, "topic IDs differ, a topic deleted and created again, not replicas of one partition: "+strings.Join(ids, ", "))
			return v
		}
	}
	unverified := 0
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			c := compare(rs[i].Partition, rs[j].Partition)
			unverified += c.unverified
			if c.diverge < 0 {
				continue
			}
			if v.DivergentOffset < 0 || c.diverge < v.DivergentOffset {
				v.Status, v.DivergentOffset = Diverge, c.diverge
				v.Notes = slices.DeleteFunc(v.Notes, func(s string) bool { return strings.HasPrefix(s, "brokers ") })
				v.Notes = append(v.Notes, fmt.Sprintf("brokers %s and %s part at offset %d (leader epochs there: %s and %s)",
					rs[i].Broker, rs[j].Broker, c.diverge, epochAt(rs[i].Partition, c.diverge), epochAt(rs[j].Partition, c.diverge)))
			}
			if c.diverge < rs[i].HighWatermark || c.diverge < rs[j].HighWatermark {
				v.BelowHighWatermark = true
			}
		}
	}
	if unverified > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%d batch(es) cleaned on one broker only were compared by the fields the cleaner keeps, not record by record: the other broker's records were not hashed (--all-records hashes them)", unverified))
	}
	v.Notes = append(v.Notes, spans(rs)...)
	truncation(v, o)
	return v
}

func topicID(p *Partition) string {
	if !p.HasTopicID {
		return "none"
	}
	return p.TopicID.String()
}

// epochAt is the leader epoch at off: the batch's holding it, and the
// leader-epoch-checkpoint's when it says otherwise.
func epochAt(p *Partition, off int64) string {
	batch := "none"
	if k := from(p.Batches, off); k < len(p.Batches) && p.Batches[k].Base <= off {
		batch = fmt.Sprint(p.Batches[k].Epoch)
	}
	cache := "none"
	for _, e := range p.Epochs {
		if e.StartOffset <= off {
			cache = fmt.Sprint(e.Epoch)
		}
	}
	if cache == batch {
		return batch
	}
	return fmt.Sprintf("%s (%s in its leader-epoch-checkpoint)", batch, cache)
}

// spans says which replicas are behind, or start later, than the others:
// information, not divergence.
func spans(rs []Replica) []string {
	var notes []string
	end, start := rs[0].LogEndOffset, rs[0].LogStartOffset
	for _, r := range rs {
		end, start = max(end, r.LogEndOffset), min(start, r.LogStartOffset)
	}
	for _, r := range rs {
		if r.LogEndOffset < end {
			notes = append(notes, fmt.Sprintf("broker %s ends at %d, %d behind the longest replica (a lagging follower, or an older copy)", r.Broker, r.LogEndOffset, end-r.LogEndOffset))
		}
		if r.LogStartOffset > start {
			notes = append(notes, fmt.Sprintf("broker %s starts at %d, later than %d (retention or records deleted there)", r.Broker, r.LogStartOffset, start))
		}
	}
	return notes
}

// chooseLeader picks the replica Kafka's election would prefer: the highest
// latest leader epoch, then the longest log, then the first named.
func chooseLeader(rs []Replica, want string) int {
	if want != "" {
		for i := range rs {
			if rs[i].Broker == want {
				return i
			}
		}
		return -1
	}
	best := 0
	for i := 1; i < len(rs); i++ {
		e, b := rs[i].LatestEpoch(), rs[best].LatestEpoch()
		if e > b || e == b && rs[i].LogEndOffset > rs[best].LogEndOffset {
			best = i
		}
	}
	return best
}

// truncation applies Kafka's truncation rule to every replica but the leader.
func truncation(v *Verdict, o RunOptions) {
	rs := v.Replicas
	li := chooseLeader(rs, o.Leader)
	if li < 0 {
		v.Notes = append(v.Notes, "broker "+o.Leader+" holds no replica: no truncation computed")
		return
	}
	l := rs[li].Partition
	v.Leader = rs[li].Broker
	newEpoch := int32(0)
	for _, r := range rs {
		newEpoch = max(newEpoch, r.LatestEpoch()+1)
	}
	cache := leaderCache(l, newEpoch)
	for i := range rs {
		if i == li {
			continue
		}
		r := &rs[i]
		r.WouldTruncateTo = truncateTo(r.Partition, l, cache)
		r.Lost = lostFrom(r.Partition, r.WouldTruncateTo)
		if r.WouldTruncateTo < l.LogStartOffset {
			// Its next fetch is out of the leader's range: Kafka empties
			// its log and starts it at the leader's log start offset
			// (AbstractFetcherThread.fetchOffsetAndTruncate).
			r.WouldTruncateTo = l.LogStartOffset
			r.Lost = lostFrom(r.Partition, math.MinInt64)
			v.Notes = append(v.Notes, fmt.Sprintf("broker %s ends before broker %s's log start offset %d: its log would be emptied and start there", r.Broker, v.Leader, l.LogStartOffset))
		}
		if r.Lost.BelowHighWatermark {
			v.BelowHighWatermark = true
		}
	}
}

func lostFrom(p *Partition, to int64) Lost {
	l := Lost{FirstOffset: -1, LastOffset: -1, FirstTimestamp: -1, LastTimestamp: -1}
	for k := from(p.Batches, to); k < len(p.Batches); k++ {
		b := &p.Batches[k]
		if l.FirstOffset < 0 {
			l.FirstOffset = b.Base
		}
		l.LastOffset = b.Last
		l.Records += int64(b.Count)
		if b.MaxTimestamp >= 0 {
			if l.FirstTimestamp < 0 || b.MaxTimestamp < l.FirstTimestamp {
				l.FirstTimestamp = b.MaxTimestamp
			}
			l.LastTimestamp = max(l.LastTimestamp, b.MaxTimestamp)
		}
	}
	l.BelowHighWatermark = l.FirstOffset >= 0 && l.FirstOffset < p.HighWatermark
	return l
}
