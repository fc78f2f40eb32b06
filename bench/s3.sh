#!/usr/bin/env bash
# Object-storage targets of issue 12, against S3Proxy 4.1.0 (filesystem backend) on loopback:
#
#   1. savepoint inspect s3://bench/sp of the 10M-entry bench savepoint: < 1 s, and < 1% of the
#      savepoint's bytes sent by the server;
#   2. migrate rescale s3 -> s3 (128 -> 256 key groups): within 2x of `rclone copy` between two
#      prefixes of the same server (measured in the same run), peak RSS < 256 MiB; shown beside
#      rclone's copy with server-side copy disabled, and the floor of any verified rewrite
#      (that copy-through, then `rclone cat` of the copy: every byte down, up and read back);
#   3. migrate uid s3 -> s3: < 2 s, and no state bytes downloaded.
#
#   bench/s3.sh [KEYS] [RUNS]    defaults: 1000000 keys (10M entries, 1 + 9 per key), 3 runs
#   BENCH_OUT=FILE               also write the markdown section there
#
# The savepoint is the one bench/run.sh uses (oracle command bench-savepoint, cached under
# .bench/). Bytes are counted by a loopback TCP relay between statecraft and the server (every
# byte the server sends, HTTP headers, listings and error bodies included, so an upper bound of
# the object bytes read); the timed runs talk to the server directly. rclone is Debian's package
# (installed when missing and running as root).
set -euo pipefail
keys="${1:-1000000}"
runs="${2:-3}"
map_per_key=9
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cache="$root/.bench"
mkdir -p "$cache"
work="$(mktemp -d "$cache/s3.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[bench s3 $(date -u +%H:%M:%S)] $*" >&2; }

need=()
command -v rclone >/dev/null 2>&1 || need+=(rclone)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  apt-get install -y -q "${need[@]}" >&2 || { apt-get update -q >&2 && apt-get install -y -q "${need[@]}" >&2; }
fi
command -v rclone >/dev/null 2>&1 || { echo "bench/s3.sh: rclone is missing (apt-get install rclone)" >&2; exit 1; }

# ---------- inputs ----------
# BENCH_S3_INPUT=grown: instead of the Flink-written bench savepoint (minutes of Flink to make
# once), the savepoint bench/migrate.sh grows in Go from the Flink-made keyed-hashmap fixture
# (migrate.growSavepoint: Flink's header and entry bytes under KEYS keys, 8 entries per key).
if [ "${BENCH_S3_INPUT:-}" = grown ]; then
  sp="$cache/grown-k$keys"
  op=uid:int-keyed
  input="grown from the keyed-hashmap fixture (bench/migrate.sh's), $keys keys x 8 entries"
  if [ ! -f "$sp/_metadata" ]; then
    log "growing $sp ($keys keys)"
    rm -rf "$sp"
    STATECRAFT_BENCH_OUT="$sp" STATECRAFT_BENCH_KEYS="$keys" go test -count=1 -run '^TestGrowSavepoint$' ./migrate > /dev/null
  fi
else
  sp="$cache/sp-k$keys-m$map_per_key-hashmap"
  op=uid:bench-keyed
  input="bench-savepoint (Flink 2.3.0), $keys keys x (1 + $map_per_key) entries"
  if [ ! -f "$sp/_metadata" ]; then
    log "generating $sp with Flink (oracle bench-savepoint $keys $map_per_key hashmap)"
    rm -rf "$sp"
    testdata/oracle/run.sh bench-savepoint "$sp" "$keys" "$map_per_key" hashmap > "$work/gen.log" 2>&1 || { tail -30 "$work/gen.log" >&2; exit 1; }
  fi
fi
size=$(du -sbL "$sp" | cut -f1)
meta=$(stat -c %s "$sp/_metadata")
go build -o "$work/statecraft" ./cmd/statecraft
sc="$work/statecraft"

# ---------- the server ----------
jar="$HOME/.m2/repository/org/gaul/s3proxy/4.1.0/s3proxy-4.1.0-jar-with-dependencies.jar"
[ -f "$jar" ] || mvn -q dependency:get -Dartifact=org.gaul:s3proxy:4.1.0:jar:jar-with-dependencies >&2
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(freeport)
data="$work/data"
mkdir -p "$data/bench"
cat > "$work/s3proxy.properties" <<EOF
s3proxy.endpoint=http://127.0.0.1:$port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=bench
s3proxy.credential=bench-secret
jclouds.provider=filesystem
jclouds.filesystem.basedir=$data
EOF
java -Xmx512m -jar "$jar" --properties "$work/s3proxy.properties" > "$work/s3proxy.log" 2>&1 &
pids+=($!)
server=$!
for _ in $(seq 600); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 0.2
done
curl -s -o /dev/null "http://127.0.0.1:$port/" || { tail -20 "$work/s3proxy.log" >&2; exit 1; }
# The source is uploaded through the S3 API (rclone), so that the server keeps each object's
# MD5 as its ETag, as an upload by Flink or any S3 client leaves it (a file copied into the
# filesystem backend behind the server's back has none, and copies of it could not be proven
# by ETag).

# A relay that counts the bytes the server sends (bench/s3.sh only).
relay_port=$(freeport)
python3 - "$relay_port" "$port" "$work/relay.count" > "$work/relay.log" 2>&1 <<'PY' &
import asyncio, sys
listen, target, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
total = 0
async def pipe(r, w, count):
    global total
    try:
        while True:
            b = await r.read(1 << 16)
            if not b:
                break
            if count:
                total += len(b)
                open(out, "w").write(str(total))
            w.write(b)
            await w.drain()
    finally:
        w.close()
async def handle(cr, cw):
    sr, sw = await asyncio.open_connection("127.0.0.1", target)
    await asyncio.gather(pipe(cr, sw, False), pipe(sr, cw, True), return_exceptions=True)
async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with srv:
        await srv.serve_forever()
asyncio.run(main())
PY
pids+=($!)
echo 0 > "$work/relay.count"
for _ in $(seq 300); do
  python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$relay_port" 2>/dev/null && break
  sleep 0.2
done

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
direct="http://127.0.0.1:$port"
relayed="http://127.0.0.1:$relay_port"
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Other RCLONE_CONFIG_BENCH_ENDPOINT="$direct" \
  RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=bench RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=bench-secret \
  RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE=true RCLONE_CONFIG_BENCH_REGION=us-east-1

# A command that fails leaves $work/failed (the helpers run in subshells) and stops the run.
check() { if [ -f "$work/failed" ]; then cat "$work/failed" >&2; exit 1; fi; }
# counted CMD...: runs CMD through the relay and prints the bytes the server sent.
counted() {
  local before after
  before=$(cat "$work/relay.count")
  AWS_ENDPOINT_URL_S3="$relayed" "$@" > /dev/null || echo "bench/s3.sh: failed: $*" >> "$work/failed"
  after=$(cat "$work/relay.count")
  echo $((after - before))
}
# timed CMD...: runs CMD against the server directly; prints "wall_ms cpu_ms rss_kib server_cpu_ms"
# (server_cpu_ms: the CPU time S3Proxy spent meanwhile, from /proc: on a shared machine, CPU
# is what a run costs whatever the load).
server_cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / t}' "/proc/$server/stat"; }
timed() {
  local t0 t1 s0 s1
  s0=$(server_cpu)
  t0=$(date +%s%N)
  AWS_ENDPOINT_URL_S3="$direct" /usr/bin/time -v -o "$work/time.txt" "$@" > /dev/null || echo "bench/s3.sh: failed: $*" >> "$work/failed"
  t1=$(date +%s%N)
  s1=$(server_cpu)
  echo "$(( (t1 - t0) / 1000000 )) $(awk -F: '/User time|System time/ {s += $2} END {printf "%d", s * 1000}' "$work/time.txt") $(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt") $((s1 - s0))"
}
# best CMD...: runs CMD RUNS times; prints the fastest run's "wall_ms cpu_ms rss_kib
# server_cpu_ms" and the mean wall time.
best() {
  local best_ms=0 best_row="" sum=0 row ms
  for _ in $(seq "$runs"); do
    row=$(timed "$@")
    ms=${row%% *}
    sum=$((sum + ms))
    if [ -z "$best_row" ] || [ "$ms" -lt "$best_ms" ]; then best_ms=$ms; best_row=$row; fi
  done
  echo "$best_row $((sum / runs))"
}

env -u AWS_CA_BUNDLE rclone copy "$sp" bench:bench/sp

# ---------- 1. inspect ----------
log "inspect"
sent_inspect=$(counted "$sc" savepoint inspect s3://bench/sp)
read -r in_ms in_cpu in_rss _ in_mean < <(best "$sc" savepoint inspect s3://bench/sp)
check

# ---------- 2. rescale s3 -> s3 against rclone copy ----------
# Each run writes a new DST (DST must be empty); rclone copies into a new prefix each run too.
log "rescale s3 -> s3 and rclone copy"
read -r rs_ms rs_cpu rs_rss rs_srv rs_mean < <(best bash -c '"$0" migrate rescale s3://bench/sp "s3://bench/rescaled-$RANDOM$RANDOM" --max-parallelism 256 --quiet' "$sc")
# (AWS_CA_BUNDLE, when the environment sets one, makes rclone refuse its own transport.)
read -r rc_ms rc_cpu rc_rss rc_srv rc_mean < <(best env -u AWS_CA_BUNDLE bash -c 'rclone copy bench:bench/sp "bench:bench/rclone-$RANDOM$RANDOM"')
# rclone between two prefixes of one remote copies server-side (CopyObject: no byte passes through
# it). A rescale must download and upload every byte, so the same copy with server-side copy
# disabled (every byte down and up through rclone) is shown beside it for comparison.
read -r rt_ms rt_cpu rt_rss rt_srv rt_mean < <(best env -u AWS_CA_BUNDLE bash -c 'rclone copy --disable copy bench:bench/sp "bench:bench/rclone-through-$RANDOM$RANDOM"')
# The floor of any verified rewrite: every byte down, up, and read back from DST once (the
# copy-through, then rclone cat of the copy to /dev/null: no parsing, no digest). A rescale also
# re-keys and rewrites every entry and digests source and output; no tool that reads, writes and
# re-reads every byte does less I/O than this.
read -r rf_ms rf_cpu rf_rss rf_srv rf_mean < <(best env -u AWS_CA_BUNDLE bash -c 'd="bench:bench/rclone-floor-$RANDOM$RANDOM"; rclone copy --disable copy bench:bench/sp "$d" && rclone cat "$d"')
check
# The rescaled output is a savepoint statecraft reads back with the source's entry count.
out=$(ls -d "$data"/bench/rescaled-* | head -1)
src_count=$("$sc" savepoint dump "$sp" --operator "$op" --state count 2>/dev/null | wc -l)
out_count=$(AWS_ENDPOINT_URL_S3="$direct" "$sc" savepoint dump "s3://bench/${out##*/}" --operator "$op" --state count 2>/dev/null | wc -l)
[ "$src_count" = "$out_count" ] || { echo "bench/s3.sh: the rescaled savepoint has $out_count count entries, the source $src_count" >&2; exit 1; }

# ---------- 3. uid s3 -> s3 ----------
log "uid s3 -> s3"
sent_uid=$(counted "$sc" migrate uid s3://bench/sp s3://bench/uid-counted --rename "$op=uid:renamed" --quiet)
read -r uid_ms uid_cpu uid_rss _ uid_mean < <(best bash -c '"$0" migrate uid s3://bench/sp "s3://bench/uid-$RANDOM$RANDOM" --rename "$1=uid:renamed" --quiet' "$sc" "$op")
check

pct() { echo "scale=3; 100 * $1 / $2" | bc; }
ratio() { echo "scale=2; $1 / $2" | bc; }
verdict() { if [ "$1" = 1 ]; then echo pass; else echo FAIL; fi; }
in_ok=$([ "$in_ms" -lt 1000 ] && [ $((sent_inspect * 100)) -lt "$size" ] && echo 1 || echo 0)
rs_ok=$([ $((rs_ms)) -le $((2 * rc_ms)) ] && [ "$rs_rss" -lt $((256 * 1024)) ] && echo 1 || echo 0)
uid_ok=$([ "$uid_ms" -lt 2000 ] && [ "$sent_uid" -lt $((2 * meta + 65536)) ] && echo 1 || echo 0)
{
  echo "## Object storage (bench/s3.sh): S3Proxy 4.1.0 on loopback"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end ($(nproc) cores, shared)"
  echo "- input: $input, $((size >> 20)) MiB, \`_metadata\` $meta bytes; best of $runs runs (mean in brackets)"
  echo "- bytes sent: every byte the server sent through a counting loopback relay (headers and listings included)"
  echo "- cpu: user + system time of the command; server: S3Proxy's CPU time during the same run (/proc)"
  echo
  echo "| target | statecraft | peer | ratio | verdict |"
  echo "|---|---:|---:|---:|---|"
  echo "| savepoint inspect s3:// < 1 s and < 1% of the bytes | $in_ms ms ($in_mean), $sent_inspect bytes sent ($(pct "$sent_inspect" "$size")% of $size) | - | - | **$(verdict "$in_ok")** |"
  echo "| migrate rescale s3 -> s3 within 2x rclone copy, RSS < 256 MiB | $rs_ms ms ($rs_mean), cpu $rs_cpu ms (server $rs_srv ms), RSS $((rs_rss >> 10)) MiB | rclone copy $rc_ms ms ($rc_mean), cpu $rc_cpu ms (server $rc_srv ms) | $(ratio "$rs_ms" "$rc_ms")x | **$(verdict "$rs_ok")** |"
  echo "| (for comparison) migrate rescale s3 -> s3 against rclone copy --disable copy (bytes through rclone) | $rs_ms ms ($rs_mean), cpu $rs_cpu ms (server $rs_srv ms) | rclone copy-through $rt_ms ms ($rt_mean), cpu $rt_cpu ms (server $rt_srv ms) | $(ratio "$rs_ms" "$rt_ms")x | - |"
  echo "| (the floor) migrate rescale s3 -> s3 against rclone copy-through + rclone cat of the copy (every byte down, up and read back once) | $rs_ms ms ($rs_mean), cpu $rs_cpu ms (server $rs_srv ms) | copy-through + re-read $rf_ms ms ($rf_mean), cpu $rf_cpu ms (server $rf_srv ms) | $(ratio "$rs_ms" "$rf_ms")x | - |"
  echo "| migrate uid s3 -> s3 < 2 s, no state bytes downloaded | $uid_ms ms ($uid_mean), $sent_uid bytes sent (\`_metadata\` is $meta) | - | - | **$(verdict "$uid_ok")** |"
  echo
  echo "The target, 2x rclone's server-side copy, is $((2 * rc_ms)) ms; the floor of a verified rewrite measured $rf_ms ms ($(ratio "$rf_ms" "$rc_ms")x the server-side copy) in the same run."
  echo "CPU of command and server together (what a run costs the 2 cores, whatever the load): rescale $((rs_cpu + rs_srv)) ms, server-side copy $((rc_cpu + rc_srv)) ms, copy-through $((rt_cpu + rt_srv)) ms, floor $((rf_cpu + rf_srv)) ms."
} > "$work/s3.md"
cat "$work/s3.md"
[ -z "${BENCH_OUT:-}" ] || cp "$work/s3.md" "$BENCH_OUT"
