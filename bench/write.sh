#!/usr/bin/env bash
# Write targets of issue 15, each measured side by side with its peer in the same run:
#
#   1. savepoint create --like SP --data DUMP.jsonl of the 10M-entry bench savepoint's dump: at
#      least 20x faster than a State Processor API bootstrap job writing the same state, peak RSS
#      < 256 MiB (entries sorted by key group with spilling). Two peers run in the same run, each
#      with its own row and ratio:
#      - oracle bench-spa-bootstrap generates the keys and values inside the job (no input is
#        read or parsed): a lower bound for the peer's time, since a real bootstrap reads an
#        export;
#      - oracle bench-spa-bootstrap-jsonl reads the same JSONL dump statecraft reads (FileSource,
#        one Jackson parse a line, keyBy key) and writes the same savepoint: the same work as
#        statecraft, the like-for-like peer;
#      The same create from the dump as CSV (dump --format csv) is timed too, without a peer;
#   2. migrate patch of 1,000 keys into that savepoint: within 2x of migrate rescale (to
#      parallelism 4, max parallelism kept at the bench savepoint's 128) reading the same
#      savepoint.
#
#   bench/write.sh [KEYS] [RUNS]    defaults: 1000000 keys (10M entries, 1 + 9 per key), 3 runs
#                                   of statecraft, 1 of each Java peer
#   BENCH_OUT=FILE                  also write the markdown section there
#
# The input is the savepoint bench/run.sh uses (oracle bench-savepoint, cached under .bench/);
# its dump is cached beside it. Every time is process start to exit, with its CPU time (user +
# system, of every thread: on a loaded machine the steadier figure); peak RSS is GNU time's.
# Before a time is reported the outputs are checked: the created savepoint and the JSONL peer's
# dump to exactly the input dump (sorted), the generating peer's holds as many entries, and the
# patched one differs from the source in exactly the patched lines.
set -euo pipefail
keys="${1:-1000000}"
runs="${2:-3}"
map_per_key=9
load_start=$(cut -d' ' -f1-3 /proc/loadavg); started=$(date -u +%H:%M)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cache="$root/.bench"
mkdir -p "$cache"
work="$(mktemp -d "$cache/write.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log() { echo "[bench write $(date -u +%H:%M:%S)] $*" >&2; }
[ -x /usr/bin/time ] || { [ "$(id -u)" = 0 ] && apt-get install -y -q time >&2; }

sp="$cache/sp-k$keys-m$map_per_key-hashmap"
if [ ! -f "$sp/_metadata" ]; then
  log "generating $sp with Flink (oracle bench-savepoint $keys $map_per_key hashmap)"
  rm -rf "$sp"
  testdata/oracle/run.sh bench-savepoint "$sp" "$keys" "$map_per_key" hashmap > "$work/gen.log" 2>&1 || { tail -30 "$work/gen.log" >&2; exit 1; }
fi
go build -o "$work/statecraft" ./cmd/statecraft
sc="$work/statecraft"
dump="$sp.dump.jsonl"
if [ ! -s "$dump" ]; then
  log "dumping $sp"
  "$sc" savepoint dump "$sp" > "$dump.tmp" && mv "$dump.tmp" "$dump"
fi
entries=$(wc -l < "$dump")
dump_csv="$sp.dump.csv"
if [ ! -s "$dump_csv" ]; then
  log "dumping $sp as CSV"
  "$sc" savepoint dump "$sp" --format csv > "$dump_csv.tmp" && mv "$dump_csv.tmp" "$dump_csv"
fi

# timed CMD...: runs it under GNU time; sets secs, cpu (user + system seconds) and rss_kib.
timed() {
  /usr/bin/time -f '%e %M %U %S' -o "$work/time.txt" "$@" > "$work/out.txt" 2> "$work/err.txt" || { cat "$work/err.txt" >&2; tail -5 "$work/out.txt" >&2; return 1; }
  read -r secs rss_kib usr sys < "$work/time.txt"
  cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
}
best() { sort -g | head -1; }

# ---------- 1. create vs State Processor API bootstrap ----------
create_t=(); create_cpu=(); create_rss=0
for i in $(seq "$runs"); do
  rm -rf "$work/created"
  timed "$sc" savepoint create "$work/created" --like "$sp" --data "$dump"
  create_t+=("$secs"); create_cpu+=("$cpu"); [ "$rss_kib" -gt "$create_rss" ] && create_rss=$rss_kib
  log "create run $i: $secs s (cpu $cpu s), peak RSS $((rss_kib / 1024)) MiB"
done
"$sc" savepoint dump "$work/created" | sort > "$work/created.jsonl"
sort "$dump" | cmp -s - "$work/created.jsonl" || { echo "bench/write.sh: the created savepoint does not dump to the input" >&2; exit 1; }
rm -f "$work/created.jsonl"
rm -rf "$work/spa"
timed testdata/oracle/run.sh bench-spa-bootstrap "$work/spa" "$keys" "$map_per_key" hashmap
spa_t=$secs; spa_cpu=$cpu; spa_rss=$rss_kib
log "State Processor API bootstrap: $spa_t s (cpu $spa_cpu s)"
spa_entries=$("$sc" savepoint dump "$work/spa" | wc -l)
[ "$spa_entries" = "$entries" ] || { echo "bench/write.sh: the peer wrote $spa_entries entries, want $entries" >&2; exit 1; }
rm -rf "$work/spa"
rm -rf "$work/spaj"
timed testdata/oracle/run.sh bench-spa-bootstrap-jsonl "$work/spaj" "$dump" hashmap
spaj_t=$secs; spaj_cpu=$cpu; spaj_rss=$rss_kib
log "State Processor API bootstrap reading the JSONL dump: $spaj_t s (cpu $spaj_cpu s)"
"$sc" savepoint dump "$work/spaj" | sort > "$work/spaj.jsonl"
sort "$dump" | cmp -s - "$work/spaj.jsonl" || { echo "bench/write.sh: the JSONL peer's savepoint does not dump to the input" >&2; exit 1; }
rm -rf "$work/spaj" "$work/spaj.jsonl"
create_best=$(printf '%s\n' "${create_t[@]}" | best)
create_cpu_best=$(printf '%s\n' "${create_cpu[@]}" | best)

# The same savepoint from the dump as CSV (dump --format csv): a database export's usual form.
csv_t=(); csv_cpu=(); csv_rss=0
for i in $(seq "$runs"); do
  rm -rf "$work/created"
  timed "$sc" savepoint create "$work/created" --like "$sp" --data "$dump_csv"
  csv_t+=("$secs"); csv_cpu+=("$cpu"); [ "$rss_kib" -gt "$csv_rss" ] && csv_rss=$rss_kib
  log "create from CSV run $i: $secs s (cpu $cpu s), peak RSS $((rss_kib / 1024)) MiB"
done
"$sc" savepoint dump "$work/created" | sort > "$work/created.jsonl"
sort "$dump" | cmp -s - "$work/created.jsonl" || { echo "bench/write.sh: the savepoint created from CSV does not dump to the input" >&2; exit 1; }
rm -rf "$work/created" "$work/created.jsonl"
csv_best=$(printf '%s\n' "${csv_t[@]}" | best)
csv_cpu_best=$(printf '%s\n' "${csv_cpu[@]}" | best)

# ---------- 2. patch 1,000 keys vs rescale ----------
# 1,000 keys spread over the key space: their value state (3k) set to -k-1, so that every
# record changes its entry (key 0's count is 0).
awk -v n="$keys" 'BEGIN { step = int(n / 1000); if (step < 1) step = 1;
  for (k = 0; k < n && c < 1000; k += step) { printf "{\"operator\":\"uid:bench-keyed\",\"state\":\"count\",\"key\":%d,\"namespace\":null,\"value\":%d}\n", k, -k - 1; c++ } }' > "$work/patch.jsonl"
patch_t=(); rescale_t=(); patch_cpu=(); rescale_cpu=(); patch_rss=0
for i in $(seq "$runs"); do
  rm -rf "$work/patched" "$work/rescaled"
  timed "$sc" migrate patch "$sp" "$work/patched" --data "$work/patch.jsonl"
  patch_t+=("$secs"); patch_cpu+=("$cpu"); [ "$rss_kib" -gt "$patch_rss" ] && patch_rss=$rss_kib
  timed "$sc" migrate rescale "$sp" "$work/rescaled" --max-parallelism 128 --parallelism 4 --operator uid:bench-keyed
  rescale_t+=("$secs"); rescale_cpu+=("$cpu")
  log "run $i: patch ${patch_t[-1]} s (cpu ${patch_cpu[-1]} s), rescale $secs s (cpu $cpu s)"
done
changed=$("$sc" savepoint dump "$work/patched" | sort | comm -13 <(sort "$dump") - | wc -l)
[ "$changed" = "$(wc -l < "$work/patch.jsonl")" ] || { echo "bench/write.sh: the patch changed $changed lines, want $(wc -l < "$work/patch.jsonl")" >&2; exit 1; }
patch_best=$(printf '%s\n' "${patch_t[@]}" | best)
rescale_best=$(printf '%s\n' "${rescale_t[@]}" | best)
patch_cpu_best=$(printf '%s\n' "${patch_cpu[@]}" | best)
rescale_cpu_best=$(printf '%s\n' "${rescale_cpu[@]}" | best)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
section=$(cat <<MD
## Writing state (bench/write.sh, $(date -u +%Y-%m-%d) $started-$(date -u +%H:%M) UTC, load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end)

Input: bench-savepoint (Flink 2.3.0), $keys keys x (1 + $map_per_key) = $entries entries, and its dump (JSONL, $(($(stat -c %s "$dump") / 1048576)) MiB). Best of $runs runs for statecraft, one run of each Java peer.

| target | statecraft | peer | ratio (wall; cpu) | goal |
|---|---|---|---|---|
| savepoint create --like --data ($entries entries) | ${create_best} s (cpu ${create_cpu_best} s), peak RSS $((create_rss / 1024)) MiB | State Processor API bootstrap ${spa_t} s (cpu ${spa_cpu} s, RSS $((spa_rss / 1024)) MiB) | $(ratio "$spa_t" "$create_best")x faster; cpu $(ratio "$spa_cpu" "$create_cpu_best")x less | >= 20x, RSS < 256 MiB |
| savepoint create --like --data ($entries entries) vs State Processor API bootstrap reading the same JSONL | ${create_best} s (cpu ${create_cpu_best} s), peak RSS $((create_rss / 1024)) MiB | bench-spa-bootstrap-jsonl ${spaj_t} s (cpu ${spaj_cpu} s, RSS $((spaj_rss / 1024)) MiB) | $(ratio "$spaj_t" "$create_best")x faster; cpu $(ratio "$spaj_cpu" "$create_cpu_best")x less | >= 20x, RSS < 256 MiB |
| savepoint create --like --data DUMP.csv ($entries rows, $(($(stat -c %s "$dump_csv") / 1048576)) MiB) | ${csv_best} s (cpu ${csv_cpu_best} s), peak RSS $((csv_rss / 1024)) MiB | - | $(ratio "$csv_best" "$create_best")x the JSONL create's time | RSS < 256 MiB |
| migrate patch, 1,000 keys | ${patch_best} s (cpu ${patch_cpu_best} s), peak RSS $((patch_rss / 1024)) MiB | migrate rescale --parallelism 4 ${rescale_best} s (cpu ${rescale_cpu_best} s) | $(ratio "$patch_best" "$rescale_best")x the rescale's time; cpu $(ratio "$patch_cpu_best" "$rescale_cpu_best")x | <= 2x |
MD
)
echo "$section"
[ -n "${BENCH_OUT:-}" ] && echo "$section" >> "$BENCH_OUT"
exit 0
