package commands

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/replicas"
)

func digestCommand() *cli.Command {
	return &cli.Command{
		Name:      "digest",
		Category:  "inspect",
		Usage:     "write what logtool replicas needs of one broker's log directories, so that only the digest crosses the network",
		ArgsUsage: "--out FILE LOGDIR...",
		Description: "Reads one broker's log directories (its log.dirs, or a folder holding them) and writes, per partition,\n" +
			"its identity (topic, partition, topic ID), the log start offset, high watermark and leader epochs, and\n" +
			"per batch its offsets, leader epoch, CRC, size, count, max timestamp, producer and whether a cleaner\n" +
			"rewrote it; for a compacted partition also a hash of each record's key, value and headers, which the\n" +
			"compaction rule of logtool replicas needs. Batch checksums are verified without decompressing; damage\n" +
			"is recorded in the digest and reported by replicas.\n\n" +
			"The digest is versioned, checksummed frame by frame and zstd-compressed (a few bytes a batch), and\n" +
			"written crash-safely: nothing is under FILE until it is whole. Its memory does not grow with the log.\n" +
			"logtool replicas takes digests and log directories alike, with the same verdict.\n\n" +
			"Examples:\n" +
			"  logtool digest --out /tmp/$(hostname).digest testdata/kafka-logs\n" +
			"  logtool replicas testdata/kafka-logs broker2.digest    # a log dir here, a digest from elsewhere\n" +
			"  logtool digest --out b1.digest /data1/kafka /data2/kafka     # a JBOD broker's two log.dirs\n" +
			"  logtool replicas b1.digest b2.digest b3.digest",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the digest file to write (required); an existing file is replaced only once the new one is whole"},
			&cli.BoolFlag{Name: "all-records", Usage: "hash the records of every batch, not only of compacted partitions (decompresses every batch)"},
		},
		Action: runDigest,
	}
}

func runDigest(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "" || out == "-" {
		return usageErr("--out FILE is required")
	}
	if c.NArg() == 0 {
		return usageErr("no LOGDIR given")
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "digest", Takes: target.LogDirs, OutputFile: out}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	bar := newProgress(g, "digest", setLogBytes(set), true)
	defer bar.Finish()
	srcs, err := replicas.OpenLogDirs(set, replicas.Options{MaxRecordBytes: g.MaxRecordBytes, AllRecords: c.Bool("all-records"), Progress: bar.Add})
	if err != nil {
		return replicasErr(err)
	}
	if len(srcs) != 1 {
		var names []string
		for _, s := range srcs {
			names = append(names, s.Broker().Name)
		}
		return usageErr("a digest is of one broker; the paths hold brokers %s: digest each on its own", strings.Join(names, ", "))
	}
	n, err := replicas.WriteDigest(out, srcs[0])
	if err != nil {
		return err
	}
	switch {
	case g.JSON():
		return json.NewEncoder(g.Stdout).Encode(struct {
			Type       string         `json:"type"`
			File       jsonbytes.Text `json:"file"`
			Broker     string         `json:"broker"`
			Partitions int            `json:"partitions"`
		}{"digest", jsonbytes.Text(out), srcs[0].Broker().Name, n})
	case !g.Quiet:
		_, err = fmt.Fprintf(g.Stdout, "%s: broker %s, %d partition(s)\n", out, srcs[0].Broker().Name, n)
	}
	return err
}
