#!/usr/bin/env bash
# Times the native RocksDB read path of issue 13 against Flink's State Processor API and prints a
# Markdown section for BENCHMARKS.md:
#   - `savepoint dump --state count` of a native RocksDB savepoint of KEYS keys against a State
#     Processor API job reading the same savepoint (oracle bench-spa-dump, rocksdb reader): both
#     outputs must hold the same (key, value) pairs before any time counts; target >= 10x faster;
#     statecraft's peak RSS under 256 MiB at KEYS and at SMALL keys (independent of the size);
#   - `migrate convert` of the same savepoint (KEYS x 10 entries: 1M keys = 10M entries) against
#     a State Processor API job that reads it and writes a canonical savepoint (oracle
#     bench-spa-rescale with the same max parallelism, rocksdb reader, rocksdb writer: with a
#     hashmap writer the job failed at 10M entries, exit status 1 after 15 min at load ~30, in
#     the oracle's 2 GiB heap; its log was not kept): both
#     outputs, dumped by statecraft and sorted, must hold the same entries; target >= 10x faster.
#
#   bench/native.sh                  KEYS=1000000 (10M entries), SMALL=100000, 3 runs of statecraft
#   BENCH_NATIVE_KEYS=N BENCH_NATIVE_SMALL_KEYS=N BENCH_NATIVE_RUNS=N   override those
#   BENCH_NATIVE_WRITE_BACKEND=hashmap   the convert peer's writer backend (default rocksdb)
#   BENCH_OUT=FILE                   also write the section to FILE
#   bench/run.sh calls it unless BENCH_SKIP_NATIVE=1 (or BENCH_SKIP_JAVA=1).
#
# The savepoints are written by a real Flink 2.3.0 job (oracle bench-savepoint KEYS 9 rocksdb
# native: ValueState count and 9 MapState attrs entries per Integer key, parallelism 2, max
# parallelism 128, RocksDB backend, NATIVE savepoint) and cached under .bench/ (gitignored). Times
# are wall and CPU (user + system) from process start to exit, measured by bench/lib.sh (the
# removal of a previous output directory included); the Java peers run once (minutes each),
# statecraft RUNS times. On a shared machine the ratios of commands run side by side here are
# what count; the verdict is on wall time.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup
cd "$root"
keys="${BENCH_NATIVE_KEYS:-1000000}"
small="${BENCH_NATIVE_SMALL_KEYS:-100000}"
runs="${BENCH_NATIVE_RUNS:-3}"
write_backend="${BENCH_NATIVE_WRITE_BACKEND:-rocksdb}"
map_per_key=9
oracle="$root/testdata/oracle/run.sh"
cache="$root/.bench"
mkdir -p "$cache"
log() { echo "[bench/native $(date -u +%H:%M:%S)] $*" >&2; }

# Compiles the oracle (when its sources changed) before anything is timed.
flink_v=$("$oracle" version 2>/dev/null | tail -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# native_savepoint KEYS -> path of a cached native RocksDB savepoint with KEYS keys.
native_savepoint() {
  local d="$cache/sp-k$1-m$map_per_key-rocksdb-native"
  if [ ! -f "$d/_metadata" ]; then
    log "generating $d with Flink (oracle bench-savepoint $1 $map_per_key rocksdb native)"
    rm -rf "$d" "$d.json"
    "$oracle" bench-savepoint "$d" "$1" "$map_per_key" rocksdb native > "$work/gen.log" 2>&1 || { tail -30 "$work/gen.log" >&2; return 1; }
  fi
  # grep reads all of inspect's output (no -q: under pipefail an early exit would fail the pipe)
  "$sc" savepoint inspect "$d" | grep 'format native' > /dev/null || { echo "$d is not a native savepoint" >&2; return 1; }
  echo "$d"
}
verdict() { awk -v k="$1" -v m="$2" -v l="$3" 'BEGIN { ok = (k == "max") ? (m <= l) : (m >= l); print ok ? "PASS" : "MISS" }'; }
mib() { du -sb "$1" | awk '{ printf "%.1f MiB", $1 / 1048576 }'; }
# pairs FILE: the (key, value) pairs of a dump of the ValueState count, sorted.
pairs() { sed -E 's/.*"key":([-0-9]+),.*"value":([-0-9]+).*/\1\t\2/' "$1" | LC_ALL=C sort; }

big=$(native_savepoint "$keys")
little=$(native_savepoint "$small")
entries=$((keys * (1 + map_per_key)))

# ---------- savepoint dump against the State Processor API ----------
log "savepoint dump of $keys keys: State Processor API (bench-spa-dump, rocksdb reader)"
measure spa_dump 1 "'$oracle' bench-spa-dump '$big' bench-keyed count rocksdb > '$work/spa-dump.txt' 2> '$work/spa_dump.log' || { tail -30 '$work/spa_dump.log' >&2; exit 1; }"
log "savepoint dump of $keys keys: statecraft ($runs runs)"
measure dump "$runs" "'$sc' savepoint dump '$big' --operator uid:bench-keyed --state count > '$work/sc-dump.jsonl'"
if ! cmp -s <(pairs "$work/sc-dump.jsonl") <(LC_ALL=C sort "$work/spa-dump.txt"); then
  echo "statecraft dump and the State Processor API printed different records; no result" >&2
  tail -20 "$work/spa_dump.log" >&2
  exit 1
fi
got=$(wc -l < "$work/sc-dump.jsonl")
[ "$got" -eq "$keys" ] || { echo "dump printed $got records, expected $keys" >&2; exit 1; }
rm -f "$work/sc-dump.jsonl" "$work/spa-dump.txt"
log "savepoint dump of $small keys: statecraft ($runs runs, peak RSS at the second size)"
measure dump_small "$runs" "'$sc' savepoint dump '$little' --operator uid:bench-keyed --state count > '$work/sc-dump-small.jsonl'"
got=$(wc -l < "$work/sc-dump-small.jsonl")
[ "$got" -eq "$small" ] || { echo "dump printed $got records, expected $small" >&2; exit 1; }
rm -f "$work/sc-dump-small.jsonl"

# ---------- migrate convert against the State Processor API ----------
dst="$work/converted"; spa_dst="$work/spa-converted"
log "migrate convert of $entries entries: State Processor API (bench-spa-rescale 128, rocksdb reader, $write_backend writer)"
measure spa_conv 1 "rm -rf '$spa_dst'; '$oracle' bench-spa-rescale '$big' '$spa_dst' 128 rocksdb $write_backend > '$work/spa_conv.log' 2>&1 || { tail -30 '$work/spa_conv.log' >&2; exit 1; }"
log "migrate convert of $entries entries: statecraft ($runs runs)"
measure conv "$runs" "rm -rf '$dst'; '$sc' migrate convert '$big' '$dst' > /dev/null"
# Both outputs are canonical savepoints holding the same entries (same max parallelism, so the
# same key groups too).
for d in "$dst" "$spa_dst"; do
  "$sc" savepoint inspect "$d" | grep 'format canonical' > /dev/null || { echo "$d is not a canonical savepoint:" >&2; "$sc" savepoint inspect "$d" | head -3 >&2; exit 1; }
  "$sc" savepoint dump "$d" --operator uid:bench-keyed | LC_ALL=C sort > "$work/$(basename "$d").dump"
done
if ! cmp -s "$work/converted.dump" "$work/spa-converted.dump"; then
  echo "statecraft's and the State Processor API's converted savepoints hold different entries; no result" >&2
  exit 1
fi
got=$(wc -l < "$work/converted.dump")
[ "$got" -eq "$entries" ] || { echo "converted savepoint holds $got entries, expected $entries" >&2; exit 1; }
rm -f "$work"/*.dump

dump_ratio=$(ratio "$spa_dump_wall" "$dump_wall")
conv_ratio=$(ratio "$spa_conv_wall" "$conv_wall")
dump_cpu_ratio=$(ratio "$spa_dump_cpu" "$dump_cpu")
conv_cpu_ratio=$(ratio "$spa_conv_cpu" "$conv_cpu")
section=$(
  echo "## Native RocksDB savepoints: dump and convert against the State Processor API (bench/native.sh)"
  echo
  echo "$started, load average $load_before at start, $(cut -d' ' -f1-3 /proc/loadavg) at end; Flink $flink_v (oracle, local MiniCluster, parallelism 2)."
  echo "Inputs, NATIVE savepoints written by Flink's RocksDB backend (oracle bench-savepoint KEYS $map_per_key rocksdb native): \`$(basename "$big")\` ($keys keys, $entries entries, $(mib "$big")) and \`$(basename "$little")\` ($small keys, $(mib "$little"))."
  echo "Before timing counts, the dumps' (key, value) pairs and the two converted savepoints' entries (dumped and sorted) were checked equal."
  echo
  echo "| target | statecraft | State Processor API | ratio | verdict |"
  echo "|---|---:|---:|---:|---|"
  echo "| savepoint dump --state count, $keys keys: >= 10x faster | ${dump_wall} ms (cpu ${dump_cpu} ms) | ${spa_dump_wall} ms (cpu ${spa_dump_cpu} ms) | ${dump_ratio}x (cpu ${dump_cpu_ratio}x) | **$(verdict min "$dump_ratio" 10)** |"
  echo "| savepoint dump, peak RSS < 256 MiB at $keys keys | ${dump_rss} MiB | JVM ${spa_dump_rss} MiB | - | **$(verdict max "$dump_rss" 256)** |"
  echo "| savepoint dump, peak RSS < 256 MiB at $small keys (independent of size) | ${dump_small_rss} MiB (${dump_small_wall} ms) | - | - | **$(verdict max "$dump_small_rss" 256)** |"
  echo "| migrate convert, $entries entries: >= 10x faster (peer: rocksdb reader, $write_backend writer) | ${conv_wall} ms (cpu ${conv_cpu} ms, RSS ${conv_rss} MiB) | ${spa_conv_wall} ms (cpu ${spa_conv_cpu} ms, RSS ${spa_conv_rss} MiB) | ${conv_ratio}x (cpu ${conv_cpu_ratio}x) | **$(verdict min "$conv_ratio" 10)** |"
  echo
  echo "statecraft ran $runs times per row (mean wall), each Java peer once. migrate convert verifies its output (re-reads it and compares per-state counts and checksums with the source's) and fsyncs it."
)
echo "$section"
if [ -n "${BENCH_OUT:-}" ]; then echo "$section" > "$BENCH_OUT"; fi
