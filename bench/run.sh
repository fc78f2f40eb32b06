#!/usr/bin/env bash
# Runs every performance target of statecraft side by side with its peer and writes BENCHMARKS.md
# (also printed). `make bench` calls it.
#
#   bench/run.sh                 full run (about 30 minutes on 2 cores, most of it the Java peers)
#   BENCH_QUICK=1 bench/run.sh   smaller inputs and fewer runs (a few minutes once inputs are cached)
#   BENCH_OUT=FILE               where to write the report (default BENCHMARKS.md at the repo root)
#   BENCH_SKIP_JAVA=1            skip the targets that need the oracle (dump and rescale peers)
#
# Large inputs are savepoints written by a real Flink 2.3.0 job (oracle command bench-savepoint)
# and cached under .bench/ (gitignored), so reruns do not regenerate them. Every timing is end
# to end: process start to exit, output to a file or /dev/null. hyperfine is used when
# installed (apt-get install -y hyperfine), else a date +%s%N loop. Before any time is reported,
# statecraft's output is checked against the peer's (same records, same savepoint contents).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quick="${BENCH_QUICK:-}"
out_md="${BENCH_OUT:-$root/BENCHMARKS.md}"
oracle="$root/testdata/oracle/run.sh"
cache="$root/.bench"
mkdir -p "$cache"
work="$(mktemp -d "$cache/run.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [ -n "$quick" ]; then
  go_count=2; plan_runs=10; sc_runs=3; peer_runs=1; dump_keys=100000; rescale_sizes="100000"
else
  go_count=3; plan_runs=20; sc_runs=5; peer_runs=2; dump_keys=1000000; rescale_sizes="100000 1000000"
fi
# Every benchmark savepoint has MAP_PER_KEY map entries per key besides its one value entry, so
# KEYS keys are KEYS * (1 + MAP_PER_KEY) keyed entries: 100,000 keys = 1M, 1,000,000 = 10M.
map_per_key=9

report="$work/report.md"
results="$work/results.tsv" # target, measured, peer, ratio, verdict
: > "$results"
log() { echo "[bench $(date -u +%H:%M:%S)] $*" >&2; }
say() { printf '%s\n' "$*" >> "$report"; }

# ---------- timing helpers ----------

# timeit NAME RUNS WARMUP PREPARE CMD -> prints "mean_ms min_ms stddev_ms cpu_ms" (cpu: mean user+system
# time, "?" without hyperfine); CMD and PREPARE are
# shell strings (PREPARE runs before every run and is not timed, e.g. removing an output dir).
timeit() {
  local name="$1" runs="$2" warmup="$3" prep="$4" cmd="$5" j="$work/h-$RANDOM.json"
  if command -v hyperfine >/dev/null 2>&1; then
    local pargs=()
    [ -n "$prep" ] && pargs=(--prepare "$prep")
    hyperfine --style none --warmup "$warmup" --runs "$runs" "${pargs[@]}" --export-json "$j" -n "$name" "$cmd" >&2
    jq -r '.results[0] | "\(.mean*1000) \(.min*1000) \((.stddev // 0)*1000) \((.user + .system)*1000)"' "$j"
  else
    local i t0 t1 d sum=0 sumsq=0 min=""
    for ((i = 0; i < warmup; i++)); do [ -n "$prep" ] && eval "$prep"; eval "$cmd"; done
    for ((i = 0; i < runs; i++)); do
      [ -n "$prep" ] && eval "$prep"
      t0=$(date +%s%N); eval "$cmd"; t1=$(date +%s%N)
      d=$(((t1 - t0) / 1000))
      sum=$((sum + d)); sumsq=$((sumsq + d * d / 1000))
      if [ -z "$min" ] || [ "$d" -lt "$min" ]; then min=$d; fi
    done
    awk -v s="$sum" -v q="$sumsq" -v n="$runs" -v m="$min" 'BEGIN { mu = s / n; v = q * 1000 / n - mu * mu; if (v < 0) v = 0; printf "%.3f %.3f %.3f ?\n", mu / 1000, m / 1000, sqrt(v) / 1000 }'
  fi
}

# peak_rss_mib CMD -> runs CMD once under /usr/bin/time -v, prints its peak RSS in MiB
peak_rss_mib() {
  local t="$work/time-$RANDOM.txt"
  /usr/bin/time -v -o "$t" bash -c "$1" >/dev/null
  awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); printf "%.1f\n", $2 / 1024 }' "$t"
}

# verdict KIND MEASURED LIMIT: KIND "max" (measured <= limit) or "min" (measured >= limit)
verdict() {
  awk -v k="$1" -v m="$2" -v l="$3" 'BEGIN { ok = (k == "max") ? (m <= l) : (m >= l); print ok ? "PASS" : "MISS" }'
}
fmt() { awk -v x="$1" 'BEGIN { if (x >= 100) printf "%.0f", x; else if (x >= 10) printf "%.1f", x; else printf "%.2f", x }'; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$results"; } # target measured peer ratio verdict

# gobench PKG NAME [SUB] -> "median_ms min_ms bytes_per_op allocs_per_op median_cpu_ms" over go_count
# runs (cpu: the benchmark's own cpu-ms/op metric when it reports one, else "?")
gobench() {
  local pkg="$1" name="$2" sub="${3:-}" f="$work/gobench-$2.txt" pat="^$2\$" full="$2"
  if [ -n "$sub" ]; then pat="^$name\$/^$sub\$"; full="$name/$sub"; fi
  go test -run '^$' -bench "$pat" -benchmem -count "$go_count" "$pkg" > "$f"
  cat "$f" >&2
  awk -v n="$full" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) { if ($(i+1) == "ns/op") t[++c] = $i / 1e6; if ($(i+1) == "cpu-ms/op") u[++cu] = $i; if ($(i+1) == "B/op") b = $i; if ($(i+1) == "allocs/op") a = $i } }
    END { if (c == 0) { print "none"; exit }; for (i = 2; i <= c; i++) { x = t[i]; for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]; t[j + 1] = x }; for (i = 2; i <= cu; i++) { x = u[i]; for (j = i - 1; j >= 1 && u[j] > x; j--) u[j + 1] = u[j]; u[j + 1] = x };
      cpu = (cu == 0) ? "?" : ((cu % 2) ? u[(cu + 1) / 2] : (u[cu / 2] + u[cu / 2 + 1]) / 2);
      printf "%.3f %.3f %s %s %s\n", (c % 2) ? t[(c + 1) / 2] : (t[c / 2] + t[c / 2 + 1]) / 2, t[1], b, a, cpu }' "$f"
}

# ---------- machine ----------

log "building statecraft"
go build -o "$work/statecraft" ./cmd/statecraft
sc="$work/statecraft"
cpu=$(awk -F: '/model name/ { sub(/^ /, "", $2); print $2; exit }' /proc/cpuinfo)
mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
java_v=$(java -version 2>&1 | head -1)
flink_v="(oracle not run)"
if [ -z "${BENCH_SKIP_JAVA:-}" ]; then flink_v=$("$oracle" version 2>/dev/null | tail -1); fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# ---------- 1. plans ----------

log "plan ttl set --all vs jq"
"$root/bench/plan-ttl.sh" 5000 "$plan_runs" > "$work/plan-ttl.md"
cat "$work/plan-ttl.md" >&2
read -r ttl_mean ttl_min < <(awk -F'|' '/statecraft plan ttl set/ { print $(NF-3), $(NF-2) }' "$work/plan-ttl.md")
read -r jq_mean jq_min < <(awk -F'|' '/^\| jq / { print $(NF-3), $(NF-2) }' "$work/plan-ttl.md")
row "plan ttl set --all, 5,000-node plan, end to end (mean; min $(fmt "$ttl_min") ms) < 100 ms" "$(fmt "$ttl_mean") ms" "jq $(fmt "$jq_mean") ms" \
  "$(awk -v a="$jq_mean" -v b="$ttl_mean" 'BEGIN { printf "%.1fx faster", a / b }')" "$(verdict max "$ttl_mean" 100)"

log "go benchmarks: BenchmarkValidate, BenchmarkDiff5000, BenchmarkInspect1000x128"
for spec in "./plan BenchmarkValidate - 100 plan validate, 5,000-node plan" \
            "./plan BenchmarkDiff5000 ids-kept 200 plan diff, two 5,000-node plans, 50 differences" \
            "./cmd/statecraft BenchmarkInspect1000x128 full 100 savepoint inspect, 1,000 operators x parallelism 128"; do
  read -r pkg name sub limit what <<< "$spec"
  [ "$sub" = - ] && sub=""
  read -r med min bop aop cpu < <(gobench "$pkg" "$name" "$sub")
  if [ "$med" = none ]; then
    row "$what < $limit ms ($name)" "not run (benchmark missing)" "-" "-" "MISS"
    continue
  fi
  row "$what < $limit ms ($name${sub:+/$sub}, median of $go_count; min $(fmt "$min") ms; $((bop / 1048576)) MiB, $aop allocs/op)" "$(fmt "$med") ms (cpu $cpu ms)" "-" "-" "$(verdict max "$med" "$limit")"
done

# ---------- savepoints made by Flink ----------

# bench_savepoint KEYS -> path of a cached savepoint with KEYS keys (generated once by Flink)
bench_savepoint() {
  local keys="$1" d="$cache/sp-k$1-m$map_per_key-hashmap"
  if [ ! -f "$d/_metadata" ]; then
    log "generating $d with Flink (oracle bench-savepoint $keys $map_per_key hashmap)"
    rm -rf "$d" "$d.json"
    local t0; t0=$(date +%s)
    "$oracle" bench-savepoint "$d" "$keys" "$map_per_key" hashmap > "$work/gen.log" 2>&1 || { tail -30 "$work/gen.log" >&2; return 1; }
    echo "$(($(date +%s) - t0))" > "$d.gen-seconds"
  fi
  echo "$d"
}

dump_section=""
rescale_inputs=""
rescale_rows=""
if [ -z "${BENCH_SKIP_JAVA:-}" ]; then
  # ---------- 3. savepoint dump vs State Processor API ----------
  sp=$(bench_savepoint "$dump_keys")
  log "savepoint dump of $dump_keys keys vs bench-spa-dump"
  "$sc" savepoint dump "$sp" --operator uid:bench-keyed --state count > "$work/sc-dump.jsonl"
  "$oracle" bench-spa-dump "$sp" bench-keyed count > "$work/spa-dump.txt" 2> "$work/spa-dump.err" || { tail -30 "$work/spa-dump.err" >&2; exit 1; }
  # Same records: (key, value) pairs of both outputs, sorted, must be identical.
  sed -E 's/.*"key":([-0-9]+),.*"value":([-0-9]+).*/\1\t\2/' "$work/sc-dump.jsonl" | sort > "$work/sc-pairs"
  sort "$work/spa-dump.txt" > "$work/spa-pairs"
  if ! cmp -s "$work/sc-pairs" "$work/spa-pairs"; then
    echo "statecraft dump and the State Processor API printed different records; not timing" >&2
    exit 1
  fi
  n_rec=$(wc -l < "$work/sc-pairs")
  [ "$n_rec" -eq "$dump_keys" ] || { echo "dump printed $n_rec records, expected $dump_keys" >&2; exit 1; }
  read -r d_mean d_min d_sd d_cpu < <(timeit statecraft-dump "$sc_runs" 1 "" "'$sc' savepoint dump '$sp' --operator uid:bench-keyed --state count > '$work/sc-dump.jsonl'")
  read -r p_mean p_min p_sd p_cpu < <(timeit spa-dump "$peer_runs" 0 "" "'$oracle' bench-spa-dump '$sp' bench-keyed count > '$work/spa-dump.txt' 2>/dev/null")
  d_rss=$(peak_rss_mib "'$sc' savepoint dump '$sp' --operator uid:bench-keyed --state count > /dev/null")
  ratio=$(awk -v a="$p_mean" -v b="$d_mean" 'BEGIN { printf "%.1f", a / b }')
  row "savepoint dump, ValueState of $dump_keys keys, end to end, >= 10x faster than the State Processor API" \
    "$(fmt "$d_mean") ms (peak RSS $d_rss MiB)" "SPA $(fmt "$p_mean") ms" "${ratio}x" "$(verdict min "$ratio" 10)"
  dump_section=$(printf '| statecraft savepoint dump --state count (jsonl) | %s | %s | %s | %s |\n| State Processor API job (oracle bench-spa-dump, hashmap reader, parallelism 2) | %s | %s | %s | %s |' \
    "$sc_runs" "$(fmt "$d_mean")" "$(fmt "$d_min")" "$(fmt "$d_sd")" "$peer_runs" "$(fmt "$p_mean")" "$(fmt "$p_min")" "$(fmt "$p_sd")")
  dump_input="$(basename "$sp"): $(du -sb "$sp" | awk '{ printf "%.1f MiB", $1 / 1048576 }'), $dump_keys records checked equal (key, value) before timing"

  # ---------- 4. migrate rescale vs State Processor API and cp -r; migrate uid ----------
  for keys in $rescale_sizes; do
    sp=$(bench_savepoint "$keys")
    entries=$((keys * (1 + map_per_key)))
    size=$(du -sb "$sp" | awk '{ printf "%.1f MiB", $1 / 1048576 }')
    log "migrate rescale of $entries entries ($size) vs bench-spa-rescale and cp -r"
    dst="$work/rescaled"; spa_dst="$work/spa-rescaled"; cp_dst="$work/copied"; uid_dst="$work/renamed"
    rm -rf "$dst" "$spa_dst"
    # Both rescaled copies must hold the same state: compare statecraft's dumps of each (keys,
    # values and map entries), and the new max parallelism in both.
    "$sc" migrate rescale "$sp" "$dst" --max-parallelism 256 > "$work/rescale.out"
    "$oracle" bench-spa-rescale "$sp" "$spa_dst" 256 > "$work/spa-rescale.log" 2>&1 || { tail -30 "$work/spa-rescale.log" >&2; exit 1; }
    for d in "$dst" "$spa_dst"; do
      "$sc" savepoint dump "$d" --operator uid:bench-keyed | sed -E 's/"keyGroup":[0-9]+,//' | sort > "$d.dump"
    done
    if ! cmp -s "$dst.dump" "$spa_dst.dump"; then
      echo "statecraft rescale and the State Processor API rescale hold different state; not timing" >&2
      diff "$dst.dump" "$spa_dst.dump" | head -5 >&2
      exit 1
    fi
    got=$(wc -l < "$dst.dump")
    [ "$got" -eq "$entries" ] || { echo "rescaled savepoint holds $got entries, expected $entries" >&2; exit 1; }
    "$sc" savepoint inspect "$dst" --json 2>/dev/null | grep -q '"maxParallelism": *256' || log "warning: could not confirm max parallelism 256 in statecraft's output with inspect --json"
    rm -f "$dst.dump" "$spa_dst.dump"

    read -r r_mean r_min r_sd r_cpu < <(timeit rescale "$sc_runs" 1 "rm -rf '$dst'" "'$sc' migrate rescale '$sp' '$dst' --max-parallelism 256 > /dev/null")
    r_rss=$(peak_rss_mib "rm -rf '$dst'; '$sc' migrate rescale '$sp' '$dst' --max-parallelism 256")
    read -r c_mean c_min c_sd c_cpu < <(timeit cp "$sc_runs" 1 "rm -rf '$cp_dst'" "cp -r '$sp' '$cp_dst'")
    read -r cs_mean cs_min cs_sd cs_cpu < <(timeit cp-sync "$sc_runs" 1 "rm -rf '$cp_dst'" "cp -r '$sp' '$cp_dst' && sync '$cp_dst' '$cp_dst'/*")
    read -r s_mean s_min s_sd s_cpu < <(timeit spa-rescale "$peer_runs" 0 "rm -rf '$spa_dst'" "'$oracle' bench-spa-rescale '$sp' '$spa_dst' 256 > /dev/null 2>&1")
    s_rss=$(peak_rss_mib "rm -rf '$spa_dst'; '$oracle' bench-spa-rescale '$sp' '$spa_dst' 256 > /dev/null 2>&1")
    read -r u_mean u_min u_sd u_cpu < <(timeit uid "$sc_runs" 1 "rm -rf '$uid_dst'" "'$sc' migrate uid '$sp' '$uid_dst' --rename uid:bench-keyed=uid:bench-keyed-v2 > /dev/null")
    read -r un_mean un_min un_sd un_cpu < <(timeit uid-noverify "$sc_runs" 1 "rm -rf '$uid_dst'" "'$sc' migrate uid '$sp' '$uid_dst' --rename uid:bench-keyed=uid:bench-keyed-v2 --no-verify > /dev/null")
    links=$(find "$uid_dst" -type f -links +1 | wc -l)

    spa_ratio=$(awk -v a="$s_mean" -v b="$r_mean" 'BEGIN { printf "%.1f", a / b }')
    cp_ratio=$(awk -v a="$r_mean" -v b="$c_mean" 'BEGIN { printf "%.2f", a / b }')
    label="$entries entries ($size)"
    row "migrate rescale 128->256, $label: >= 20x faster than the State Processor API" "$(fmt "$r_mean") ms" "SPA $(fmt "$s_mean") ms" "${spa_ratio}x" "$(verdict min "$spa_ratio" 20)"
    row "migrate rescale 128->256, $label: within 3x of cp -r" "$(fmt "$r_mean") ms" "cp -r $(fmt "$c_mean") ms (with fsync $(fmt "$cs_mean") ms)" "${cp_ratio}x cp -r" "$(verdict max "$cp_ratio" 3)"
    row "migrate rescale, $label: peak RSS < 256 MiB" "$r_rss MiB" "SPA JVM $s_rss MiB" "-" "$(verdict max "$r_rss" 256)"
    row "migrate uid (hard links, verification on), $label: < 100 ms" "$(fmt "$u_mean") ms" "--no-verify $(fmt "$un_mean") ms" "$links files hard-linked" "$(verdict max "$u_mean" 100)"
    rescale_rows+=$(printf '| %s | statecraft migrate rescale | %s | %s | %s | %s | %s MiB |\n' "$label" "$sc_runs" "$(fmt "$r_mean")" "$(fmt "$r_min")" "$(fmt "$r_sd")" "$r_rss")$'\n'
    rescale_rows+=$(printf '| %s | State Processor API job (oracle bench-spa-rescale) | %s | %s | %s | %s | %s MiB |\n' "$label" "$peer_runs" "$(fmt "$s_mean")" "$(fmt "$s_min")" "$(fmt "$s_sd")" "$s_rss")$'\n'
    rescale_rows+=$(printf '| %s | cp -r | %s | %s | %s | %s | - |\n' "$label" "$sc_runs" "$(fmt "$c_mean")" "$(fmt "$c_min")" "$(fmt "$c_sd")")$'\n'
    rescale_rows+=$(printf '| %s | cp -r, then fsync of every copied file | %s | %s | %s | %s | - |\n' "$label" "$sc_runs" "$(fmt "$cs_mean")" "$(fmt "$cs_min")" "$(fmt "$cs_sd")")$'\n'
    rescale_rows+=$(printf '| %s | statecraft migrate uid (hard links, verify) | %s | %s | %s | %s | - |\n' "$label" "$sc_runs" "$(fmt "$u_mean")" "$(fmt "$u_min")" "$(fmt "$u_sd")")$'\n'
    rescale_rows+=$(printf '| %s | statecraft migrate uid --no-verify | %s | %s | %s | %s | - |\n' "$label" "$sc_runs" "$(fmt "$un_mean")" "$(fmt "$un_min")" "$(fmt "$un_sd")")$'\n'
    gen="$(cat "$sp.gen-seconds" 2>/dev/null || echo '?')"
    rescale_inputs+="- \`$(basename "$sp")\`: $keys keys x (1 value + $map_per_key map entries) = $entries entries, $size, generated by Flink in ${gen} s"$'\n'
    rm -rf "$dst" "$spa_dst" "$cp_dst" "$uid_dst"
  done
fi

# ---------- report ----------

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "# statecraft benchmarks"
  echo
  echo "Written by \`make bench\` (bench/run.sh$([ -n "$quick" ] && echo ", BENCH_QUICK=1")). Every statecraft number is measured in the same run"
  echo "as its peer, on the same input, after checking that both produce the same result."
  echo
  echo "- date: $started"
  echo "- machine: $(nproc) cores ($cpu), $mem memory; load average $load_before at start, $load_after at end (other jobs share this machine, so absolute times carry noise)"
  echo "- $(go version | cut -d' ' -f3-4), $java_v, Flink $flink_v (oracle, local MiniCluster)"
  echo "- timing: $(command -v hyperfine >/dev/null && hyperfine --version || echo 'date +%s%N loop'); page cache warm; peak RSS from /usr/bin/time -v"
  echo
  echo "## Targets"
  echo
  echo "| target | statecraft | peer | ratio | verdict |"
  echo "|---|---:|---:|---:|---|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | **%s** |\n", $1, $2, $3, $4, $5 }' "$results"
  echo
  echo "## plan ttl set --all against jq (bench/plan-ttl.sh)"
  echo
  sed 's/^### /**/; s/)$/)**/' "$work/plan-ttl.md"
  echo
  if [ -n "$dump_section" ]; then
    echo "## savepoint dump against the State Processor API"
    echo
    echo "Input: $dump_input. Both print one line per key of the ValueState \`count\`."
    echo
    echo "| tool | runs | mean (ms) | min (ms) | stddev (ms) |"
    echo "|---|---:|---:|---:|---:|"
    echo "$dump_section"
    echo
    echo "## migrate rescale (max parallelism 128 -> 256) against the State Processor API and cp -r"
    echo
    echo "Inputs, written by the oracle's Flink job \`bench-savepoint\` (ValueState<Long> and MapState<Integer, Long>, Integer keys, hashmap backend, canonical savepoint, parallelism 2, max parallelism 128):"
    echo
    printf '%s' "$rescale_inputs"
    echo
    echo "Before timing, statecraft's and the State Processor API's rescaled savepoints are dumped and must hold the same entries."
    echo "statecraft verifies its output (re-reads it, compares counts and checksums) and fsyncs it; plain cp -r does neither."
    echo
    echo "| input | tool | runs | mean (ms) | min (ms) | stddev (ms) | peak RSS |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    printf '%s' "$rescale_rows"
    echo
  fi
  echo "## Go benchmarks (raw)"
  echo
  echo '```'
  cat "$work"/gobench-*.txt | grep -E '^Benchmark'
  echo '```'
} > "$report"
cp "$report" "$out_md"
cat "$out_md"
