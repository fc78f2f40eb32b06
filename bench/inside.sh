#!/usr/bin/env bash
# Times the "look inside" commands of issue 16 on a large savepoint and prints a Markdown
# section for BENCHMARKS.md:
#   - `savepoint stats` against `savepoint dump --format jsonl > /dev/null` of the same savepoint
#     (target: within 1.5x), with stats' peak RSS (target: under 256 MiB);
#   - `savepoint diff A B` of the savepoint and a copy of it in which `migrate patch` changed the
#     value of 1,000 keys, against reading both once (`dump --format jsonl` of A, then of B; target:
#     within 3x), with diff's peak RSS; the diff must report exactly those 1,000 changes;
#   - `savepoint dump --format parquet -o DIR/` of the keyed operator, with its peak RSS and the
#     size of its files, Snappy-compressed (the default) and with --compression none;
#   - the same export of a savepoint written by Flink (oracle bench-savepoint: ValueState and
#     MapState, PQ_KEYS keys x (1 + 9) entries) against the State Processor API job that reads it
#     and writes the same two Parquet files with parquet-avro (oracle bench-spa-parquet; target:
#     statecraft at least 10x faster). The peer writes uncompressed pages, so it is compared with
#     --compression none; the default (Snappy) export is timed beside it with its size. Every
#     output is checked to hold the same rows (pyarrow).
#
#   bench/inside.sh [KEYS] [RUNS]     defaults: 1250000 keys (about 10M entries), 3 runs
#   BENCH_OUT=FILE                    also write the section to FILE
#   BENCH_INSIDE_PQ_KEYS=N            keys of the Flink-written savepoint (default 1000000: 10M
#                                     entries; generated once and kept under .bench/, as bench/run.sh does)
#   BENCH_INSIDE_SPA_HEAP=SIZE        the peer's JVM heap (default 4g; ORACLE_HEAP of run.sh)
#   BENCH_SKIP_JAVA=1                 skip the State Processor API peer (no JVM)
#
# The savepoint is grown from the Flink-made fixture testdata/savepoints/keyed-hashmap
# (grow_savepoint in bench/lib.sh). Times are wall and CPU (user + system) means; on a shared
# machine the CPU time and the ratios of commands run side by side are what count.
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
pq_size=$(du -sb "$work/pq" | cut -f1)
measure pqnone "$runs" "rm -rf '$work/pqnone' && '$sc' savepoint dump '$work/src' --operator uid:int-keyed --format parquet --compression none -o '$work/pqnone/' > /dev/null"
pqnone_size=$(du -sb "$work/pqnone" | cut -f1)

# ---------- Parquet export against the State Processor API ----------
pq_section=""
if [ -z "${BENCH_SKIP_JAVA:-}" ]; then
  oracle="$root/testdata/oracle/run.sh"
  pq_keys="${BENCH_INSIDE_PQ_KEYS:-1000000}"
  fsp="$root/.bench/sp-k$pq_keys-m9-hashmap"
  if [ ! -f "$fsp/_metadata" ]; then
    mkdir -p "$root/.bench"
    rm -rf "$fsp"
    "$oracle" bench-savepoint "$fsp" "$pq_keys" 9 hashmap > "$work/gen.log" 2>&1 || { tail -30 "$work/gen.log" >&2; exit 1; }
  fi
  # The peer restores the whole savepoint into its heap (hashmap backend) and buffers a row group
  # per file: the oracle's default 2 GiB heap is too small at 10M entries.
  spa_heap="${BENCH_INSIDE_SPA_HEAP:-4g}"
  # The peer's build (Maven resolve, javac) happens here, untimed.
  ORACLE_PROFILE=bench-parquet "$oracle" version > /dev/null
  measure spapq 1 "rm -rf '$work/spa-pq' && ORACLE_HEAP='$spa_heap' ORACLE_PROFILE=bench-parquet '$oracle' bench-spa-parquet '$fsp' '$work/spa-pq' > '$work/spa-pq.log' 2>&1 || { tail -40 '$work/spa-pq.log' >&2; exit 1; }"
  measure scpq "$runs" "rm -rf '$work/sc-pq' && '$sc' savepoint dump '$fsp' --operator uid:bench-keyed --format parquet --compression none -o '$work/sc-pq/' > /dev/null"
  measure scpqz "$runs" "rm -rf '$work/sc-pqz' && '$sc' savepoint dump '$fsp' --operator uid:bench-keyed --format parquet -o '$work/sc-pqz/' > /dev/null"
  spapq_size=$(du -sb "$work/spa-pq" | cut -f1)
  scpq_size=$(du -sb "$work/sc-pq" | cut -f1)
  scpqz_size=$(du -sb "$work/sc-pqz" | cut -f1)
  # Same rows in all three: every column of every file, sorted.
  python3 - "$work/spa-pq" "$work/sc-pq" "$work/sc-pqz" <<'PY' || { echo "statecraft's and the State Processor API's Parquet files differ; no result" >&2; exit 1; }
import sys, pyarrow.parquet as pq
for name, cols in (("count", ["keyGroup", "key", "value"]), ("attrs", ["keyGroup", "key", "userKey", "value"])):
    got = [sorted(zip(*(pq.read_table(f"{d}/{name}.parquet", columns=cols).column(c).to_pylist() for c in cols))) for d in sys.argv[1:4]]
    for d, g in zip(sys.argv[2:4], got[1:]):
        if g != got[0] or not g:
            sys.exit(f"{name}: {len(g)} rows in {d}, {len(got[0])} from the State Processor API, or other values")
PY
  pq_entries=$(( pq_keys * 10 ))
  pq_section=$(
    echo
    echo "Parquet export of a savepoint written by Flink (oracle bench-savepoint, hashmap: $pq_keys keys x (1 value + 9 map entries) = $pq_entries entries, $(( $(du -sbL "$fsp" | cut -f1) >> 20 )) MiB), both files checked to hold the same rows (pyarrow) before the result:"
    echo
    echo "| command | runs | wall (mean) | CPU (mean) | peak RSS | files | speed-up (wall / CPU) | target |"
    echo "|---|---|---|---|---|---|---|---|"
    echo "| State Processor API job + parquet-avro, uncompressed (oracle bench-spa-parquet, heap $spa_heap) | 1 | ${spapq_wall} ms | ${spapq_cpu} ms | ${spapq_rss} MiB | ${spapq_size} B | 1 | peer |"
    echo "| savepoint dump --operator uid:bench-keyed --format parquet --compression none -o DIR/ | $runs | ${scpq_wall} ms | ${scpq_cpu} ms | ${scpq_rss} MiB | ${scpq_size} B | $(ratio "$spapq_wall" "$scpq_wall")x / $(ratio "$spapq_cpu" "$scpq_cpu")x | >= 10x |"
    echo "| the same, Snappy (the default) | $runs | ${scpqz_wall} ms | ${scpqz_cpu} ms | ${scpqz_rss} MiB | ${scpqz_size} B | $(ratio "$spapq_wall" "$scpqz_wall")x / $(ratio "$spapq_cpu" "$scpqz_cpu")x | (not the peer's codec) |"
  )
fi

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
  echo "| savepoint dump --format parquet -o DIR/ (Snappy, the default: $pq_size B) | ${pq_wall} ms | ${pq_cpu} ms | ${pq_rss} MiB | $(ratio "$pq_wall" "$dump_wall")x / $(ratio "$pq_cpu" "$dump_cpu")x of dump jsonl | the State Processor API peer: below |"
  echo "| savepoint dump --format parquet --compression none -o DIR/ ($pqnone_size B) | ${pqnone_wall} ms | ${pqnone_cpu} ms | ${pqnone_rss} MiB | $(ratio "$pqnone_wall" "$dump_wall")x / $(ratio "$pqnone_cpu" "$dump_cpu")x of dump jsonl | Snappy's files $(ratio "$pqnone_size" "$pq_size")x smaller |"
  echo "$pq_section"
)
echo "$section"
if [ -n "${BENCH_OUT:-}" ]; then echo "$section" > "$BENCH_OUT"; fi
