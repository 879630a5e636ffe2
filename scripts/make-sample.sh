#!/usr/bin/env bash
# Writes the sample log directory committed under testdata/kafka-logs with
# `logtool gen`. Deterministic: the same command writes the same bytes.
set -euo pipefail
out=${1:-testdata/kafka-logs}
rm -rf "$out"
gen() { go run . gen --quiet --out "$out" "$@"; }
# A modern v2 topic, LZ4 like a Java producer with compression.type=lz4, two partitions.
gen --topic orders --partitions 2 --records 1500 --keys 300 --compression lz4 --segment-bytes 65536 --seed 1
# A transactional topic: commits and aborts, .txnindex, producer snapshots.
gen --topic payments.txn --records 1200 --keys 100 --transactional-ratio 0.4 --abort-ratio 0.3 --segment-bytes 32768 --seed 2
# A compacted-style topic: few keys, tombstones, zstd.
gen --topic user-profiles --records 1500 --keys 40 --tombstone-ratio 0.1 --compression zstd --segment-bytes 32768 --seed 3
# Old message formats: magic 1 (Kafka 0.10) with gzip, magic 0 (0.8/0.9) with snappy.
gen --topic clicks-v1 --magic 1 --records 800 --keys 0 --compression gzip --segment-bytes 32768 --seed 4
gen --topic legacy.events-v0 --magic 0 --records 600 --keys 60 --segment-bytes 32768 --seed 5
gen --topic legacy.events-v0-snappy --magic 0 --records 400 --keys 60 --compression snappy --segment-bytes 32768 --seed 6
