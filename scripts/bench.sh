#!/usr/bin/env bash
# Side-by-side timings of logtool against cat on the same generated data, with
# peak RSS. Warm cache: every input is read once before it is measured.
#   BENCH_MB   size of the generated v2 partition in MiB (default 1024)
#   BENCH_DIR  where to write (default /tmp/logtool-bench; needs ~3x BENCH_MB free)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${BENCH_MB:-1024}
dir=${BENCH_DIR:-/tmp/logtool-bench}
mkdir -p "$dir"
go build -o "$dir/logtool" .
lt="$dir/logtool"

# ~1.1 KB per record: 1000-byte values, batches of up to 20.
records=$(( mb * 1024 * 1024 / 1100 ))
if [ ! -f "$dir/v2/.done-$mb" ]; then
  rm -rf "$dir/v2" "$dir/v0"
  "$lt" gen --quiet --out "$dir/v2" --topic bench --records "$records" --value-bytes 1000 --batch-records 20 --keys 1000000 --tombstone-ratio 0.01 --segment-bytes 1073741824
  "$lt" gen --quiet --out "$dir/v0" --topic bench-v0 --magic 0 --records $(( records / 4 )) --value-bytes 1000 --segment-bytes 1073741824
  touch "$dir/v2/.done-$mb"
fi
v2part="$dir/v2/bench-0"
v0part="$dir/v0/bench-v0-0"
v2logs=("$v2part"/*.log)
bytes=$(cat "${v2logs[@]}" | wc -c)

printf '%-44s %9s %9s %9s %8s\n' "command (${mb} MiB v2 partition)" seconds MB/s "RSS MiB" "x cat"
run() {
  local name=$1; shift
  "$@" >/dev/null 2>&1 || true # warm the cache
  /usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" >/dev/null 2>&1 || true
  local out
  out=$(tail -1 "$dir/time.out")
  local secs=${out% *} kb=${out#* }
  [ -z "${catsecs:-}" ] && catsecs=$secs
  awk -v n="$name" -v s="$secs" -v kb="$kb" -v b="$bytes" -v c="$catsecs" \
    'BEGIN { if (s == 0) s = 0.001; if (c == 0) c = 0.001; printf "%-44s %9.2f %9.0f %9.1f %8.2f\n", n, s, b/s/1e6, kb/1024, s/c }'
}
catsecs=
run "cat" cat "${v2logs[@]}"
run "dump (shallow)" "$lt" --no-progress dump "${v2logs[@]}"
run "dump --deep-iteration" "$lt" --no-progress dump --deep-iteration "${v2logs[@]}"
run "verify" "$lt" --no-progress verify "$v2part"
cp -r "$v2part" "$dir/reindex-0" 2>/dev/null || true
run "reindex" "$lt" --no-progress reindex "$dir/reindex-0"
rm -rf "$dir/reindex-0"
# compact rewrites in place: every run gets a fresh copy (the copy is not timed).
run "compact --max-lag 1h" sh -c "rm -rf '$dir/compact-0'; cp -r '$v2part' '$dir/compact-0' && /usr/bin/time -f '%e %M' -o '$dir/compact.time' '$lt' --no-progress compact --max-lag 1h --now 2030-01-01T00:00:00Z '$dir/compact-0'"
out=$(cat "$dir/compact.time"); secs=${out% *}; kb=${out#* }
awk -v s="$secs" -v kb="$kb" -v b="$bytes" -v c="$catsecs" 'BEGIN { printf "%-44s %9.2f %9.0f %9.1f %8.2f\n", "  compact alone (without the copy)", s, b/s/1e6, kb/1024, s/c }'
rm -rf "$dir/compact-0"

v0logs=("$v0part"/*.log)
bytes=$(cat "${v0logs[@]}" | wc -c)
catsecs=
echo
printf '%-44s\n' "magic-0 partition ($(( bytes / 1048576 )) MiB)"
run "cat" cat "${v0logs[@]}"
rm -rf "$dir/up" && mkdir -p "$dir/up"
run "upgrade --output (v0 -> v1)" sh -c "rm -rf '$dir/up'/*; '$lt' --no-progress upgrade --output '$dir/up' '$v0part'"
