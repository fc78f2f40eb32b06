#!/usr/bin/env bash
# Times the "look inside" commands of issue 16 on a large savepoint and prints a Markdown
# section for BENCHMARKS.md:
#   - `savepoint stats` against `savepoint dump --format jsonl > /dev/null` of the same savepoint
#     (target: within 1.5x), with stats' peak RSS (target: under 256 MiB);
#   - `savepoint dump --format parquet -o DIR/` of the keyed operator, with its peak RSS.
#
#   bench/inside.sh [KEYS] [RUNS]     defaults: 1250000 keys (about 10M entries), 3 runs
#   BENCH_OUT=FILE                    also write the section to FILE
#
# The savepoint is grown from the Flink-made fixture testdata/savepoints/keyed-hashmap as
# bench/migrate.sh grows it (migrate.growSavepoint: Flink's header and entry bytes under KEYS
# keys in the key groups Flink computes). Times are wall and CPU (user + system) means; on a
# shared machine the CPU time and the ratios of commands run side by side are what count.
# Not measured here (yet): the diff of two 10M-entry savepoints and the State Processor API peer
# of the Parquet export.
set -euo pipefail
keys="${1:-1250000}"
runs="${2:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/statecraft" ./cmd/statecraft)
(cd "$root" && STATECRAFT_BENCH_OUT="$work/src" STATECRAFT_BENCH_KEYS="$keys" go test -count=1 -run '^TestGrowSavepoint$' ./migrate >/dev/null)
size=$(du -sb "$work/src" | cut -f1)
entries=$("$work/statecraft" savepoint stats --json --top 0 "$work/src" | sed -nE 's/^ *"entries": ([0-9]+),?$/\1/p' | head -1)

# measure NAME CMD: runs CMD (a shell string) RUNS times; sets NAME_wall, NAME_cpu (mean ms)
# and NAME_rss (largest peak RSS, MiB).
measure() {
  local name="$1" cmd="$2" wall=0 cpu=0 rss=0 t r c
  for _ in $(seq "$runs"); do
    rm -rf "$work/pq"
    t=$(date +%s%N)
    /usr/bin/time -v -o "$work/time.txt" bash -c "$cmd"
    wall=$(( wall + ($(date +%s%N) - t) / 1000000 ))
    r=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
    [ "$r" -gt "$rss" ] && rss=$r
    c=$(awk -F: '/User time|System time/ {s += $2} END {printf "%d", s * 1000}' "$work/time.txt")
    cpu=$(( cpu + c ))
  done
  printf -v "${name}_wall" '%d' $(( wall / runs ))
  printf -v "${name}_cpu" '%d' $(( cpu / runs ))
  printf -v "${name}_rss" '%d' $(( rss >> 10 ))
}

sc="$work/statecraft"
measure dump "'$sc' savepoint dump '$work/src' --format jsonl > /dev/null"
measure stats "'$sc' savepoint stats '$work/src' > /dev/null"
measure pq "'$sc' savepoint dump '$work/src' --operator uid:int-keyed --format parquet -o '$work/pq/' > /dev/null"

ratio() { echo "scale=2; $1 / ($2 + 1)" | bc; }
section=$(
  echo "## savepoint stats and Parquet export (bench/inside.sh)"
  echo
  echo "$(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg); savepoint $(( size >> 20 )) MiB, $keys keys, $entries entries, $runs runs each."
  echo
  echo "| command | wall (mean) | CPU (mean) | peak RSS | ratio to dump jsonl (wall / CPU) | target |"
  echo "|---|---|---|---|---|---|"
  echo "| savepoint dump --format jsonl > /dev/null | ${dump_wall} ms | ${dump_cpu} ms | ${dump_rss} MiB | 1 | peer |"
  echo "| savepoint stats > /dev/null | ${stats_wall} ms | ${stats_cpu} ms | ${stats_rss} MiB | $(ratio "$stats_wall" "$dump_wall")x / $(ratio "$stats_cpu" "$dump_cpu")x | <= 1.5x, RSS < 256 MiB |"
  echo "| savepoint dump --format parquet -o DIR/ | ${pq_wall} ms | ${pq_cpu} ms | ${pq_rss} MiB | $(ratio "$pq_wall" "$dump_wall")x / $(ratio "$pq_cpu" "$dump_cpu")x | >= 10x faster than the State Processor API (peer not run yet) |"
)
echo "$section"
if [ -n "${BENCH_OUT:-}" ]; then echo "$section" > "$BENCH_OUT"; fi
