package commands

import (
	"github.com/logtool/logtool/internal/clidoc"
)

// manFiles are the files of a log directory, for the FILES section.
var manFiles = []clidoc.Entry{
	{Term: "LOGDIR/meta.properties", Text: "the broker's or node's identity (cluster.id, node.id or broker.id)"},
	{Term: "LOGDIR/.lock", Text: "held (fcntl) by a running broker; writers refuse a log directory whose lock is held (exit 4)"},
	{Term: "LOGDIR/recovery-point-offset-checkpoint, LOGDIR/replication-offset-checkpoint, LOGDIR/log-start-offset-checkpoint", Text: "per-disk offset checkpoints; retention updates the log start and recovery points"},
	{Term: "LOGDIR/cleaner-offset-checkpoint", Text: "the log cleaner's first dirty offsets; compact updates it"},
	{Term: "LOGDIR/cleaner-offset-checkpoint.migrated", Text: "the root file after migrate-checkpoints moved its entries to the partitions"},
	{Term: "LOGDIR/TOPIC-PARTITION/BASE.log, .index, .timeindex, .txnindex", Text: "a segment and its offset, time and transaction indexes"},
	{Term: "LOGDIR/TOPIC-PARTITION/BASE.snapshot", Text: "producer state snapshot"},
	{Term: "LOGDIR/TOPIC-PARTITION/leader-epoch-checkpoint, partition.metadata", Text: "leader epochs; the topic id"},
	{Term: "LOGDIR/TOPIC-PARTITION/cleaner-checkpoint", Text: "logtool's per-partition cleaner checkpoint: first dirty offset and last clean time"},
	{Term: "*.cleaned, *.swap, *.deleted", Text: "left by an interrupted cleaning, segment swap or deletion; a broker finishes or undoes them at startup, and so does logtool"},
	{Term: "LOGDIR/__cluster_metadata-0", Text: "the KRaft metadata log, with its snapshots OFFSET-EPOCH.checkpoint and quorum-state: each topic's ID and configuration, which compact, retention, grep --max-lag and dump read and verify checks partitions against"},
}

// doc is what clidoc needs beyond the app to render help, the manual page
// and completions.
func doc() *clidoc.Doc {
	return &clidoc.Doc{Metavars: metavars, Global: globalFlags(), Description: appDescription,
		ExitStatus: exitStatus, Files: manFiles, Values: flagValues, UsageErr: usageErr}
}
