#!/usr/bin/env bash
# Times `statecraft migrate rescale` (128 -> 256 key groups, parallelism 2 -> 3, verification on)
# against `cp -r` of the same savepoint, and reports statecraft's peak RSS.
#
#   bench/migrate.sh [KEYS] [RUNS]        defaults: 500000 keys (4,000,000 entries), 3 runs
#
# The savepoint is grown from the Flink-made fixture testdata/savepoints/keyed-hashmap
# (grow_savepoint in bench/lib.sh).
set -euo pipefail
keys="${1:-500000}"
runs="${2:-3}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup
grow_savepoint "$keys" "$work/src"
size=$(du -sb "$work/src" | cut -f1)

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
sc_total=0; cp_total=0; rss=0; cpu=0
for i in $(seq "$runs"); do
  rm -rf "$work/dst" "$work/cp" "$work/time.txt"
  t=$(date +%s%N)
  /usr/bin/time -v -o "$work/time.txt" "$work/statecraft" migrate rescale "$work/src" "$work/dst" \
    --max-parallelism 256 --parallelism 3 --link copy >/dev/null
  sc_total=$(( sc_total + $(ms "$t") ))
  r=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
  [ "$r" -gt "$rss" ] && rss=$r
  # CPU seconds (user + system): on a shared machine wall time mostly measures the neighbours.
  c=$(awk -F: '/User time|System time/ {s += $2} END {printf "%d", s * 1000}' "$work/time.txt")
  cpu=$(( cpu + c ))
  t=$(date +%s%N)
  cp -r "$work/src" "$work/cp"
  sync -f "$work/cp" 2>/dev/null || true
  cp_total=$(( cp_total + $(ms "$t") ))
done

echo "| savepoint | keys | statecraft migrate rescale (mean wall) | its CPU time | cp -r (mean wall) | ratio (wall) | peak RSS |"
echo "|---|---|---|---|---|---|---|"
printf '| %d MiB | %d | %d ms | %d ms | %d ms | %.1fx | %d MiB |\n' $(( size >> 20 )) "$keys" $(( sc_total / runs )) $(( cpu / runs )) $(( cp_total / runs )) \
  "$(echo "scale=2; $sc_total / ($cp_total + 1)" | bc)" $(( rss >> 10 ))
