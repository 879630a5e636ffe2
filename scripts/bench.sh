#!/usr/bin/env bash
# Side-by-side timings of logtool against cat on the same generated data, with
# peak RSS, in the shapes the issues set their targets on:
#   - dump (issue 3): one 512 MiB v2 segment as `logtool gen` writes it by
#     default (100-byte values, batches of 10), warm cache;
#   - compact (issue 7): a 2 GiB partition of 1M keys, 10 records per key,
#     1% tombstones; warm cache, and cold too when the page cache can be
#     dropped (root on Linux);
#   - verify, reindex and digest (issue 40: target 1.5x cat) on the same 2 GiB
#     partition, upgrade on a magic-0 one; digest also on a 2 GiB partition
#     of the same records in batches of 1-160 (17 KB on average, as a
#     producer's default batch.size of 16 KiB fills them under load);
#   - export and salvage (issue 20) on the dump segment: export to /dev/null
#     (JSON encoding included; target 300 MB/s), salvage into a new directory
#     (target: within 2x cat, here `cat > file && sync file`: the same bytes
#     written and fsynced once);
#   - deep reads on several cores (issue 19): dump --deep-iteration, verify
#     --deep and compact at GOMAXPROCS=1 and 2, on zstd, gzip and
#     uncompressed partitions of 2M records in batches of 8 records of
#     200-byte values;
#   - memory (issue 15): peak RSS of every command on decompression bombs
#     (one batch of 512 records of 1 MiB of zeros, each compressed format)
#     and on root offset checkpoints of 10,000,000 lines.
#   - the floor (issue 16): scripts/floor reads the same files and checks
#     every batch's CRC on all cores, and does nothing else; its row, next
#     to cat's, is the least a shallow dump or reindex --check can take on
#     this host, however they are written. With -lines it also prints the
#     shallow dump's lines (the same bytes), made on those cores with
#     strconv: the least the dump's work takes, done simply.
#   - grep (issue 21): one 256 MiB v2 segment of 100,000 keys, grep --key
#     within 3x cat, with the segment's pages as written and as read back
#     from disk; the same records with LZ4 and zstd, grep --key within
#     1.5x dump --deep-iteration of the same files (the "x" column is then
#     against dump). RSS stays flat: compare the 2 GiB compact partition.
# Environment:
#   BENCH_DIR    where to write (default /tmp/logtool-bench; needs ~8 GiB free)
#   BENCH_SCALE  divide every size by this, for a quick look (default 1)
#   BENCH_RUNS   timed runs per command; the best is shown (default 3)
#   BENCH_PAIRS  rounds of the alternating 1-core/2-core runs (default 7)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/logtool-bench}
scale=${BENCH_SCALE:-1}
runs=${BENCH_RUNS:-3}
pairs=${BENCH_PAIRS:-7}
mkdir -p "$dir"
CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$dir/logtool" . # as make build
lt="$dir/logtool"
go build -o "$dir/floor" ./scripts/floor
floor="$dir/floor"
now=2030-01-01T00:00:00Z

gen() { # name, then gen flags
  local name=$1; shift
  if [ ! -f "$dir/$name/.done-$scale" ]; then
    rm -rf "${dir:?}/$name"
    "$lt" gen --quiet --out "$dir/$name" --segment-bytes 1073741824 "$@"
    touch "$dir/$name/.done-$scale"
  fi
}
# 140 bytes a record: 3.83M records make 512 MiB.
gen dump --topic dump --records $(( 3830000 / scale ))
# 214 bytes a record: 10M records over 1M keys make 2 GiB.
gen compact --topic compact --records $(( 10000000 / scale )) --keys $(( 1000000 / scale )) --value-bytes 180 --tombstone-ratio 0.01
gen batch16k --topic batch16k --records $(( 10000000 / scale )) --keys $(( 1000000 / scale )) --value-bytes 180 --tombstone-ratio 0.01 --batch-records 160
gen v0 --topic v0 --magic 0 --records $(( 250000 / scale )) --value-bytes 1000
# 140 bytes a record: 1.915M records make 256 MiB uncompressed.
for c in none lz4 zstd; do
  gen "grep-$c" --topic grep --records $(( 1915000 / scale )) --keys $(( 100000 / scale )) --compression "$c"
done

can_drop=
if [ -w /proc/sys/vm/drop_caches ] && sync && echo 1 >/proc/sys/vm/drop_caches 2>/dev/null; then can_drop=1; fi

# measure CACHE CMD...: best wall time of $runs runs, and its peak RSS.
# CACHE is warm (input read first) or cold (page cache dropped first).
# PREP, when set, runs (untimed) before each run; OK_EXIT is an exit code
# that is not a failure.
measure() {
  local cache=$1; shift
  local best= bestkb= failed=0
  for _ in $(seq "$runs"); do
    [ -n "${PREP:-}" ] && sh -c "$PREP"
    if [ "$cache" = cold ]; then sync; echo 1 >/proc/sys/vm/drop_caches; else cat "${inputs[@]}" >/dev/null; fi
    # Wall time from bash's microsecond clock (GNU time rounds to 10 ms,
    # too coarse for a 60 ms cat); peak RSS from GNU time.
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$dir/time.out" "$@" >/dev/null 2>&1 || failed=$?
    # OK_EXIT, when set, is the exit code the row expects (an audit's 3).
    [ "$failed" = "${OK_EXIT:-}" ] && failed=0
    local t1=$EPOCHREALTIME
    local secs kb
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'); kb=$(tail -1 "$dir/time.out")
    if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$secs bestkb=$kb; fi
  done
  echo "$best $bestkb $failed"
}

row() { # label, cache, command...
  local label=$1 cache=$2; shift 2
  local secs kb failed
  read -r secs kb failed < <(measure "$cache" "$@")
  [ "$label" = "$base" ] && catsecs[$cache]=$secs
  awk -v n="$label" -v c="$cache" -v s="$secs" -v kb="$kb" -v b="$bytes" -v k="${catsecs[$cache]}" \
    -v f="$failed" \
    'BEGIN { if (s == 0) s = 0.001; if (k == 0) k = 0.001; printf "%-40s %-5s %8.3f %8.0f %8.1f %7.2f%s\n", n, c, s, b/s/1e6, kb/1024, s/k, f ? "  FAILED (exit " f ")" : "" }'
}

# header TITLE [BASE]: a table whose last column is the time of each row
# over that of the row labelled BASE (default cat), which comes first.
header() {
  bytes=$(cat "${inputs[@]}" | wc -c)
  base=${2:-cat}
  declare -gA catsecs=()
  echo
  printf '%-40s %-5s %8s %8s %8s %7s\n' "$1 ($(( bytes / 1048576 )) MiB)" cache seconds MB/s "RSS MiB" "x ${base%% *}"
}

inputs=("$dir"/dump/dump-0/*.log)
header "one v2 segment, 100-byte values"
# A dump takes a tenth of a second: best of more runs.
slow_runs=$runs runs=$(( runs * 4 ))
row cat warm cat "${inputs[@]}"
row "floor: read + CRC32C, all cores" warm "$floor" "${inputs[@]}"
row "floor -lines: and the dump's lines" warm "$floor" -lines "${inputs[@]}"
row "dump" warm "$lt" --no-progress dump "${inputs[@]}"
row "dump --deep-iteration" warm "$lt" --no-progress dump --deep-iteration "${inputs[@]}"
row "dump --deep-iteration --format json" warm "$lt" --no-progress --format json dump --deep-iteration "${inputs[@]}"
row "export (JSON Lines, read_committed)" warm "$lt" --no-progress export "$dir/dump/dump-0"
row "export --workers 1" warm "$lt" --no-progress --workers 1 export "$dir/dump/dump-0"
# salvage fsyncs what it writes: its reference writes the same bytes into a
# new file and fsyncs it once.
header "salvage of the same segment" "cat > file && sync file"
PREP="rm -f '$dir/copy.log'" row "cat > file && sync file" warm sh -c "cat ${inputs[*]} > '$dir/copy.log' && sync '$dir/copy.log'"
PREP="rm -rf '$dir/salvaged'" row "salvage --out" warm "$lt" --no-progress salvage "$dir/dump/dump-0" --out "$dir/salvaged/dump-0"
rm -rf "$dir/salvaged" "$dir/copy.log"
runs=$slow_runs

inputs=("$dir"/grep-none/grep-0/*.log)
# cat moves with how the page cache holds a file: on the 2-core VM, pages
# left as gen wrote them were copied out at 5 GB/s, the same pages read back
# from disk (read-ahead caches large folios) at 10-13 GB/s. Both states are
# set up here, so that runs compare: first as a writer leaves the file.
cp -p "${inputs[0]}" "${inputs[0]}.tmp" && mv "${inputs[0]}.tmp" "${inputs[0]}" && sync "${inputs[0]}"
header "one v2 segment, 100,000 keys, as written"
row cat warm cat "${inputs[@]}"
row "grep --key" warm "$lt" --no-progress grep --key key-004242 "$dir/grep-none/grep-0"
row "grep --key --workers 1" warm "$lt" --no-progress --workers 1 grep --key key-004242 "$dir/grep-none/grep-0"
row "grep --key --format json" warm "$lt" --no-progress --format json grep --key key-004242 "$dir/grep-none/grep-0"
row "grep --value-contains (find pass)" warm "$lt" --no-progress grep --value-contains user-4242, "$dir/grep-none/grep-0"
OK_EXIT=3 row "grep --max-lag 1h (every key, exit 3)" warm "$lt" --no-progress grep --max-lag 1h --now "$now" "$dir/grep-none/grep-0"
# Then dropped from the cache (no root needed) and read back.
dd if="${inputs[0]}" iflag=nocache count=0 status=none
header "the same segment, read back from disk"
row cat warm cat "${inputs[@]}"
row "grep --key" warm "$lt" --no-progress grep --key key-004242 "$dir/grep-none/grep-0"
for c in lz4 zstd; do
  inputs=("$dir/grep-$c"/grep-0/*.log)
  header "the same records, $c" "dump --deep-iteration"
  row "dump --deep-iteration" warm "$lt" --no-progress dump --deep-iteration "${inputs[@]}"
  row "grep --key" warm "$lt" --no-progress grep --key key-004242 "$dir/grep-$c/grep-0"
  row "grep --key --workers 1" warm "$lt" --no-progress --workers 1 grep --key key-004242 "$dir/grep-$c/grep-0"
done

part="$dir/compact/compact-0"
inputs=("$part"/*.log)
header "v2 partition, 1M keys x 10, 1% tombstones"
row cat warm cat "${inputs[@]}"
row "floor: read + CRC32C, all cores" warm "$floor" "${inputs[@]}"
row "verify" warm "$lt" --no-progress verify "$part"
row "reindex --check" warm "$lt" --no-progress reindex --check "$part"
# digest's target (issue 40) is 1.5x cat; the floor row above is what the
# host leaves any reader that checks every batch. A digest is written anew:
# the last run's is removed first (untimed), or its rename would time the
# file system freeing the old file's blocks (4 ms for 9 MB here).
PREP="rm -f '$dir/compact.digest'" row "digest" warm "$lt" --no-progress digest --out "$dir/compact.digest" "$dir/compact"
rm -f "$dir/compact.digest"
row "grep --key (RSS: flat in size)" warm "$lt" --no-progress grep --key key-004242 "$part"
# compact rewrites in place: each run gets a fresh copy (not timed), and
# the copy is written back before timing so it is not competing for the disk.
work="$dir/compact-work/compact-0"
PREP="rm -rf '$dir/compact-work' && mkdir -p '$dir/compact-work' && cp -r '$part' '$work' && sync" \
  row "compact --max-lag 1h" warm "$lt" --no-progress compact --max-lag 1h --now "$now" "$work"
if [ -n "$can_drop" ]; then
  row cat cold cat "${inputs[@]}"
  PREP="rm -rf '$dir/compact-work' && mkdir -p '$dir/compact-work' && cp -r '$part' '$work' && sync" \
    row "compact --max-lag 1h" cold "$lt" --no-progress compact --max-lag 1h --now "$now" "$work"
else
  echo "(cold-cache rows need a writable /proc/sys/vm/drop_caches: run as root to see them)"
fi
rm -rf "$dir/compact-work"
inputs=("$dir/batch16k"/batch16k-0/*.log)
header "the same records in batches of 1-160 (17 KB on average)"
row cat warm cat "${inputs[@]}"
row "floor: read + CRC32C, all cores" warm "$floor" "${inputs[@]}"
PREP="rm -f '$dir/batch16k.digest'" row "digest" warm "$lt" --no-progress digest --out "$dir/batch16k.digest" "$dir/batch16k"
rm -f "$dir/batch16k.digest"

inputs=("$dir"/v0/v0-0/*.log)
header "magic-0 partition, 1000-byte values"
row cat warm cat "${inputs[@]}"
PREP="rm -rf '$dir/up' && mkdir -p '$dir/up'" \
  row "upgrade --output (v0 -> v1)" warm "$lt" --no-progress upgrade --output "$dir/up" "$dir/v0/v0-0"
rm -rf "$dir/up"

# cores LABEL COMMAND...: the command at GOMAXPROCS=1 and at 2, one after
# the other, $pairs rounds. A round's speed-up is its time at 1 over its
# time at 2; the median of the rounds is shown with their range, the
# median wall times, and the median CPU time (user + system) at each, which
# shows how much work the second core added. Alternating pairs keep a slow
# spell of a shared host from landing on one side only, as it can when the
# best of several runs at 1 is set against the best at 2 taken later.
cores() {
  local label=$1; shift
  local r out=()
  for r in $(seq "$pairs"); do
    local p line=()
    for p in 1 2; do
      [ -n "${PREP:-}" ] && sh -c "$PREP"
      cat "${inputs[@]}" >/dev/null
      local t0=$EPOCHREALTIME code=0
      GOMAXPROCS=$p /usr/bin/time -f '%U %S' -o "$dir/time.out" "$@" >/dev/null 2>&1 || code=$?
      local t1=$EPOCHREALTIME
      [ "$code" = 0 ] || { echo "$label  FAILED (exit $code)"; return; }
      line+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$(tail -1 "$dir/time.out" | awk '{ printf "%.2f", $1 + $2 }')")
    done
    out+=("${line[*]}")
  done
  printf '%s\n' "${out[@]}" | awk -v n="$label" '
    function median(a, k,   i, j, t) {
      for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2
    }
    { k++; w1[k] = $1; c1[k] = $2; w2[k] = $3; c2[k] = $4; x[k] = $1 / $3; lo = (k == 1 || x[k] < lo) ? x[k] : lo; hi = (k == 1 || x[k] > hi) ? x[k] : hi }
    END { printf "%-40s %6.2fx (%.2f-%.2f, %d rounds)  wall %.3f / %.3f s  cpu %.2f / %.2f s\n", n, median(x, k), lo, hi, k, median(w1, k), median(w2, k), median(c1, k), median(c2, k) }'
}

# Deep reads on several cores (issue 19): partitions of small compressed
# batches (8 records of 200-byte values), read deep at GOMAXPROCS=1 and 2,
# which --workers follows. The target: at 2, at most 1/1.7 of the time at 1
# for dump and verify, 1/1.4 for compact; uncompressed, not slower. The
# rows are best-of timings; the speed-ups under them are alternating pairs.
# The ceiling pairs, taken between them, are internal/parallel's
# BenchmarkCeiling: what a second core gives work with no I/O and nothing
# shared, on this host at that moment (a shared host's second vCPU gave
# 1.7-2.0 over a day).
go test -c -o "$dir/parallel.test" ./internal/parallel
for c in zstd gzip none; do
  gen "small-$c" --topic "small-$c" --records $(( 2000000 / scale )) --keys $(( 200000 / scale )) \
    --batch-records 8 --value-bytes 200 --compression "$c" --tombstone-ratio 0.01
  part="$dir/small-$c/small-$c-0"
  inputs=("$part"/*.log)
  header "v2 partition, $c, batches of 8 records of 200 bytes"
  row cat warm cat "${inputs[@]}"
  for p in 1 2; do
    row "dump --deep-iteration, GOMAXPROCS=$p" warm env GOMAXPROCS=$p "$lt" --no-progress dump --deep-iteration "${inputs[@]}"
  done
  for p in 1 2; do
    row "verify --deep, GOMAXPROCS=$p" warm env GOMAXPROCS=$p "$lt" --no-progress verify --deep "$part"
  done
  work="$dir/small-work/small-$c-0"
  for p in 1 2; do
    PREP="rm -rf '$dir/small-work' && mkdir -p '$dir/small-work' && cp -r '$part' '$work' && sync" \
      row "compact --max-lag 1h, GOMAXPROCS=$p" warm env GOMAXPROCS=$p "$lt" --no-progress compact --max-lag 1h --now "$now" "$work"
  done
  echo "speed-up at GOMAXPROCS=2 (median of alternating pairs; wall and cpu at 1 / at 2):"
  cores "ceiling (work that divides perfectly)" "$dir/parallel.test" -test.run '^$' -test.bench '^BenchmarkCeiling$' -test.benchtime 1x
  cores "dump --deep-iteration" "$lt" --no-progress dump --deep-iteration "${inputs[@]}"
  cores "verify --deep" "$lt" --no-progress verify --deep "$part"
  PREP="rm -rf '$dir/small-work' && mkdir -p '$dir/small-work' && cp -r '$part' '$work' && sync" \
    cores "compact --max-lag 1h" "$lt" --no-progress compact --max-lag 1h --now "$now" "$work"
  rm -rf "$dir/small-work"
done

# KRaft metadata replay (issue 17): the 1M-record log of a large cluster
# (10,000 topics, 100,000 partitions, then ISR churn and NoOps), written and
# replayed by clustermeta's test binary, the replay in a process of its own.
meta="$dir/metadata/__cluster_metadata-0"
go test -c -o "$dir/clustermeta.test" ./clustermeta
if [ ! -f "$dir/metadata/.done" ]; then
  rm -rf "$dir/metadata" && mkdir -p "$meta"
  LOGTOOL_BENCH_METADATA_WRITE="$meta" "$dir/clustermeta.test" -test.run '^TestWriteBenchLog$' >/dev/null
  touch "$dir/metadata/.done"
fi
inputs=("$meta"/*.log)
header "KRaft metadata log, 1M records"
row cat warm cat "${inputs[@]}"
row "replay (clustermeta.Load)" warm env LOGTOOL_BENCH_METADATA="$meta" "$dir/clustermeta.test" \
  -test.run '^$' -test.bench '^BenchmarkReplay$' -test.benchtime 1x

# mem_row LABEL COMMAND...: one run's wall time and peak RSS (GNU time).
# PREP, when set, runs (untimed) before it.
mem_row() {
  local label=$1; shift
  [ -n "${PREP:-}" ] && sh -c "$PREP"
  local t0=$EPOCHREALTIME
  local code=0
  /usr/bin/time -f '%M' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/mem.err" || code=$?
  local t1=$EPOCHREALTIME
  # A failed run's figures say nothing: show its exit code and first error.
  awk -v n="$label" -v a="$t0" -v b="$t1" -v kb="$(tail -1 "$dir/time.out")" -v c="$code" \
    -v e="$(grep -v '^Command exited' "$dir/mem.err" | head -1)" \
    'BEGIN { printf "%-58s %8.2f %8.1f%s\n", n, b - a, kb / 1024, c ? "  exit " c ": " e : "" }'
}
mem_header() { echo; printf '%-58s %8s %8s\n' "$1" seconds "RSS MiB"; }

bomb_records=$(( 512 / scale ))
if [ ! -f "$dir/bombs/.done-$scale" ]; then
  rm -rf "$dir/bombs"
  LOGTOOL_BOMB_DIR="$dir/bombs" LOGTOOL_BOMB_RECORDS=$bomb_records go test -count=1 -run '^TestWriteBombs$' ./internal/testkit/faulttest/ >/dev/null
  touch "$dir/bombs/.done-$scale"
fi
mem_header "decompression bombs: $bomb_records records of 1 MiB of zeros in one batch"
for b in "$dir"/bombs/v*; do
  f=$(basename "$b") logs="$b/kafka-logs" part="$b/kafka-logs/bomb-0"
  work="$dir/bomb-work"
  mem_row "$f verify --deep" "$lt" --no-progress verify --deep "$part"
  mem_row "$f dump --deep-iteration --print-data-log" "$lt" --no-progress dump --deep-iteration --print-data-log "$part"/*.log
  mem_row "$f reindex --check" "$lt" --no-progress reindex --check "$part"
  mem_row "$f find --offset 0" "$lt" --no-progress find --offset 0 "$part"
  mem_row "$f export" "$lt" --no-progress export "$part"
  PREP="rm -rf '$work.out'" mem_row "$f salvage --out" "$lt" --no-progress salvage "$part" --out "$work.out/bomb-0"
  mem_row "$f replay --dry-run" "$lt" --no-progress replay --dry-run --bootstrap-server localhost:9092 "$part"
  PREP="rm -rf '$work' && cp -r '$logs' '$work'" \
    mem_row "$f compact --max-lag 1ms" "$lt" --no-progress compact --max-lag 1ms --now "$now" "$work/bomb-0"
  case $f in v0-*|v1-*)
    PREP="rm -rf '$work' && cp -r '$logs' '$work'" \
      mem_row "$f upgrade --to-magic 2" "$lt" --no-progress upgrade --to-magic 2 "$work/bomb-0" ;;
  esac
  rm -rf "$work" "$work.out"
done

lines=$(( 10000000 / scale ))
ck="$dir/checkpoints"
if [ ! -f "$ck/.done-$scale" ]; then
  rm -rf "$ck"
  "$lt" gen --quiet --out "$ck/kafka-logs" --topic events --records 500
  awk -v n="$lines" 'BEGIN { print 0; print n; for (i = 0; i < n; i++) print "ghost " i " " i }' >"$ck/root"
  for f in cleaner-offset-checkpoint log-start-offset-checkpoint recovery-point-offset-checkpoint; do
    cp "$ck/root" "$ck/kafka-logs/$f"
  done
  touch "$ck/.done-$scale"
fi
mem_header "root offset checkpoints of $lines lines (cleaner, log-start, recovery-point)"
logs="$ck/kafka-logs" work="$dir/ck-work"
fresh="rm -rf '$work' && cp -r '$logs' '$work'"
mem_row "verify" "$lt" --no-progress verify "$logs"
mem_row "dump cleaner-offset-checkpoint" "$lt" --no-progress dump "$logs/cleaner-offset-checkpoint"
mem_row "reindex --check" "$lt" --no-progress reindex --check "$logs"
mem_row "find --offset 0" "$lt" --no-progress find --offset 0 "$logs/events-0"
mem_row "export" "$lt" --no-progress export "$logs"
PREP="rm -rf '$work.out'" mem_row "salvage --out" "$lt" --no-progress salvage "$logs/events-0" --out "$work.out/events-0"
mem_row "replay --dry-run" "$lt" --no-progress replay --dry-run --bootstrap-server localhost:9092 "$logs"
# compact's offset map (--offset-map-memory) is counted apart: Kafka's
# cleaner holds its dedupe buffer whole too.
PREP=$fresh mem_row "compact --max-lag 1ms --offset-map-memory 16MiB" \
  "$lt" --no-progress compact --topic ".*" --max-lag 1ms --offset-map-memory 16MiB --now "$now" "$work"
PREP=$fresh mem_row "retention --retention-ms 1h" "$lt" --no-progress retention --topic ".*" --retention-ms 1h --now "$now" "$work"
PREP=$fresh mem_row "migrate-checkpoints" "$lt" --no-progress migrate-checkpoints "$work"
PREP="$fresh && mv '$work/cleaner-offset-checkpoint' '$work/cleaner-offset-checkpoint.migrated'" \
  mem_row "migrate-checkpoints --reverse" "$lt" --no-progress migrate-checkpoints --reverse "$work"
PREP="$fresh && cp '$ck/root' '$work/cleaner-offset-checkpoint.migrated'" \
  mem_row "migrate-checkpoints, merging a .migrated file" "$lt" --no-progress migrate-checkpoints "$work"
rm -rf "$work" "$work.out"

echo
echo "deep iteration against franz-go's kmsg, on the dump segment above (Go benchmarks):"
LOGTOOL_BENCH_SEGMENT=$(ls "$dir"/dump/dump-0/*.log) go test -run '^$' -bench 'DumpDeep$|KmsgDecode|KmsgDump' -benchtime 3x ./dump/ |
  grep '^Benchmark'
