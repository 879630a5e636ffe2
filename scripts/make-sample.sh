#!/usr/bin/env bash
# Writes the sample log directory committed under testdata/kafka-logs with
# `logtool gen`. Deterministic: the same command writes the same bytes.
# A KRaft node's log dir: __cluster_metadata-0 creates the topics with the
# configurations a real cluster would give them, so that compact and
# retention treat each topic as a broker would.
set -euo pipefail
out=${1:-testdata/kafka-logs}
rm -rf "$out"
gen() { go run . gen --quiet --kraft --out "$out" "$@"; }
# A modern v2 topic, LZ4 like a Java producer with compression.type=lz4, two partitions; kept 12 hours.
# The cluster-wide broker default keeps the other delete-policy topics 3 days.
gen --topic orders --partitions 2 --records 1500 --keys 300 --compression lz4 --segment-bytes 65536 --seed 1 \
    --config orders:retention.ms=43200000 --broker-config log.retention.hours=72
# A transactional topic: commits and aborts, .txnindex, producer snapshots; at most 128 KiB per partition.
gen --topic payments.txn --records 1200 --keys 100 --transactional-ratio 0.4 --abort-ratio 0.3 --segment-bytes 32768 --seed 2 \
    --config payments.txn:retention.bytes=131072
# A compacted topic: few keys, tombstones, zstd; compacted within a day.
gen --topic user-profiles --records 1500 --keys 40 --tombstone-ratio 0.1 --compression zstd --segment-bytes 32768 --seed 3 \
    --config user-profiles:cleanup.policy=compact --config user-profiles:max.compaction.lag.ms=86400000 \
    --config user-profiles:segment.bytes=32768
# Old message formats: magic 1 (Kafka 0.10) with gzip, keyless; magic 0 (0.8/0.9), compacted, and with snappy.
gen --topic clicks-v1 --magic 1 --records 800 --keys 0 --compression gzip --segment-bytes 32768 --seed 4
gen --topic legacy.events-v0 --magic 0 --records 600 --keys 60 --segment-bytes 32768 --seed 5 \
    --config legacy.events-v0:cleanup.policy=compact
gen --topic legacy.events-v0-snappy --magic 0 --records 400 --keys 60 --compression snappy --segment-bytes 32768 --seed 6
# gen's lock, which is not part of the sample.
rm -f "$out/.lock"
