#!/usr/bin/env bash
# Times the "look inside" commands of issue 16 on a large savepoint and prints a Markdown
# section for BENCHMARKS.md:
#   - `savepoint stats` against `savepoint dump --format jsonl > /dev/null` of the same savepoint
#     (target: within 1.5x), with stats' peak RSS (target: under 256 MiB);
#   - `savepoint diff A B` of the savepoint and a copy of it in which `migrate patch` changed the
#     value of 1,000 keys, against reading both once (`dump --format jsonl` of A, then of B; target:
#     within 3x), with diff's peak RSS; the diff must report exactly those 1,000 changes;
#   - `savepoint dump --format parquet -o DIR/` of the keyed operator, with its peak RSS.
#
#   bench/inside.sh [KEYS] [RUNS]     defaults: 1250000 keys (about 10M entries), 3 runs
#   BENCH_OUT=FILE                    also write the section to FILE
#
# The savepoint is grown from the Flink-made fixture testdata/savepoints/keyed-hashmap
# (grow_savepoint in bench/lib.sh). Times are wall and CPU (user + system) means; on a shared
# machine the CPU time and the ratios of commands run side by side are what count.
# Not measured here (yet): the State Processor API peer of the Parquet export.
set -euo pipefail
keys="${1:-1250000}"
runs="${2:-3}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup
grow_savepoint "$keys" "$work/src"
size=$(du -sb "$work/src" | cut -f1)
entries=$("$sc" savepoint stats --json --top 0 "$work/src" | sed -nE 's/^ *"entries": ([0-9]+),?$/\1/p' | head -1)

# B: 1,000 keys spread over the key range get a new `count` (every grown key holds Flink's
# sample value, never -1).
changed=1000
awk -v n="$keys" -v c="$changed" 'BEGIN { for (i = 0; i < c; i++) printf "{\"operator\":\"uid:int-keyed\",\"state\":\"count\",\"key\":%d,\"namespace\":null,\"value\":-1}\n", int(i * n / c) }' > "$work/patch.jsonl"
"$sc" migrate patch "$work/src" "$work/b" --data "$work/patch.jsonl" --quiet > /dev/null
# The diff must find exactly the patched keys, and nothing else, before it is timed.
set +e
"$sc" savepoint diff "$work/src" "$work/b" > "$work/diff.txt"
code=$?
set -e
if [ "$code" != 2 ] || [ "$(grep -c '^  state ' "$work/diff.txt")" != 1 ] ||
  ! grep -qE "^  state count \(value\): [0-9]+ entries in A, [0-9]+ in B: 0 only in A, 0 only in B, $changed changed$" "$work/diff.txt"; then
  echo "savepoint diff (exit $code) did not report exactly the $changed patched keys:" >&2
  cat "$work/diff.txt" >&2
  exit 1
fi

measure dump "$runs" "'$sc' savepoint dump '$work/src' --format jsonl > /dev/null"
measure stats "$runs" "'$sc' savepoint stats '$work/src' > /dev/null"
measure both "$runs" "'$sc' savepoint dump '$work/src' --format jsonl > /dev/null && '$sc' savepoint dump '$work/b' --format jsonl > /dev/null"
measure diff "$runs" "'$sc' savepoint diff '$work/src' '$work/b' > /dev/null; [ \$? = 2 ]"
measure pq "$runs" "rm -rf '$work/pq' && '$sc' savepoint dump '$work/src' --operator uid:int-keyed --format parquet -o '$work/pq/' > /dev/null"

section=$(
  echo "## savepoint stats, diff and Parquet export (bench/inside.sh)"
  echo
  echo "$(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg); savepoint $(( size >> 20 )) MiB, $keys keys, $entries entries, $runs runs each; B is the savepoint with $changed keys' \`count\` changed by \`migrate patch\` (diff checked to report exactly those before timing)."
  echo
  echo "| command | wall (mean) | CPU (mean) | peak RSS | ratio to its peer (wall / CPU) | target |"
  echo "|---|---|---|---|---|---|"
  echo "| savepoint dump --format jsonl > /dev/null | ${dump_wall} ms | ${dump_cpu} ms | ${dump_rss} MiB | 1 | peer of stats |"
  echo "| savepoint stats > /dev/null | ${stats_wall} ms | ${stats_cpu} ms | ${stats_rss} MiB | $(ratio "$stats_wall" "$dump_wall")x / $(ratio "$stats_cpu" "$dump_cpu")x | <= 1.5x, RSS < 256 MiB |"
  echo "| savepoint dump --format jsonl of A, then of B | ${both_wall} ms | ${both_cpu} ms | ${both_rss} MiB | 1 | peer of diff |"
  echo "| savepoint diff A B > /dev/null | ${diff_wall} ms | ${diff_cpu} ms | ${diff_rss} MiB | $(ratio "$diff_wall" "$both_wall")x / $(ratio "$diff_cpu" "$both_cpu")x | <= 3x, bounded RSS |"
  echo "| savepoint dump --format parquet -o DIR/ | ${pq_wall} ms | ${pq_cpu} ms | ${pq_rss} MiB | $(ratio "$pq_wall" "$dump_wall")x / $(ratio "$pq_cpu" "$dump_cpu")x of dump jsonl | >= 10x faster than the State Processor API (peer not run yet) |"
)
echo "$section"
if [ -n "${BENCH_OUT:-}" ]; then echo "$section" > "$BENCH_OUT"; fi
