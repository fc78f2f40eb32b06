#!/usr/bin/env bash
# Times `statecraft plan diff` on two synthetic 5,000-node compiled plans (internal/plangen) that
# differ in 50 state TTLs (set with `statecraft plan ttl set`), once with the ids kept and once
# with every id shifted by one (every node then matched by structure), against GNU diff -u on
# the same files, and prints a markdown table.
#
#   bench/plan-diff.sh [NODES] [RUNS]        defaults: 5000 nodes, 10 runs
#
# Before timing, the diff must find exactly the 50 TTL changes (and, renumbered, match every
# node): a benchmark of a wrong answer would mean nothing. Needs jq (installed with apt-get when
# missing, as bench/plan-ttl.sh does).
set -euo pipefail
nodes="${1:-5000}"
runs="${2:-10}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! command -v jq >/dev/null 2>&1; then
  echo "installing jq..." >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get install -y jq >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y jq >&2; }
fi

(cd "$root" && go build -o "$work/statecraft" ./cmd/statecraft)
(cd "$root" && go run ./internal/plangen/cmd/plangen -nodes "$nodes" -seed 1) > "$work/old.json"
sc="$work/statecraft"

# NEW: 50 state entries (every k-th of the plan) set to 7 h, a TTL plangen never writes.
mapfile -t picks < <("$sc" plan ttl list --json "$work/old.json" |
  jq -r '.states | . as $s | [range(0; 50)] | map($s[(. * ($s | length) / 50 | floor)]) | .[] | "\(.node):\(.name)"')
args=()
for p in "${picks[@]}"; do args+=(--set "$p=7h"); done
"$sc" plan ttl set "$work/old.json" "${args[@]}" -o "$work/new.json" >/dev/null 2>&1
# Renumbered NEW: every id + 1 in nodes and edges, nothing else.
perl -pe 's/"(id|source|target)" : (\d+)/"$1" : ${\($2 + 1)}/g' "$work/new.json" > "$work/renum.json"

check() { # file -> verdict ttl-changes matched-by-structure
  "$sc" plan diff --json "$work/old.json" "$1" | jq -r '"\(.verdict) \(.counts.ttlChanges) \(.counts.matchedByStructure) \(.counts.matched)"'
}
read -r v t s m < <(check "$work/new.json")
if [ "$v" != ttl-only ] || [ "$t" != 50 ] || [ "$m" != "$nodes" ]; then
  echo "ids kept: verdict $v, $t TTL changes, $m matched; want ttl-only, 50, $nodes" >&2
  exit 1
fi
read -r v t s m < <(check "$work/renum.json")
if [ "$v" != uid-remap ] || [ "$t" != 50 ] || [ "$s" != "$nodes" ]; then
  echo "renumbered: verdict $v, $t TTL changes, $s by structure; want uid-remap, 50, $nodes" >&2
  exit 1
fi

time_ms() { # command... -> "mean min" in ms over $runs runs after one warm-up
  local i t0 t1 d sum=0 min=""
  "$@" >/dev/null 2>&1 || true
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    d=$(((t1 - t0) / 1000))
    sum=$((sum + d))
    if [ -z "$min" ] || [ "$d" -lt "$min" ]; then min=$d; fi
  done
  awk -v s="$sum" -v n="$runs" -v m="$min" 'BEGIN { printf "%.1f %.1f\n", s / n / 1000, m / 1000 }'
}

size=$(wc -c < "$work/old.json")
printf '### plan diff: %s nodes, %s bytes per plan, 50 TTLs changed (%s runs, date +%%s%%N; load %s)\n\n' \
  "$nodes" "$size" "$runs" "$(cut -d' ' -f1 /proc/loadavg)"
# CPU time (user + system) of one run says what the work costs when the machine is shared.
cpu_ms() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.0f", ($1 + $2) * 1000 }'
  else
    printf 'n/a'
  fi
}
printf '| command | mean (ms) | min (ms) | CPU user+sys, one run (ms) |\n|---|---:|---:|---:|\n'
row() {
  local label="$1"; shift
  read -r mean min < <(time_ms "$@")
  printf '| %s | %.1f | %.1f | %s |\n' "$label" "$mean" "$min" "$(cpu_ms "$@")"
}
row "statecraft plan diff (ids kept)" "$sc" plan diff "$work/old.json" "$work/new.json"
row "statecraft plan diff --json (ids kept)" "$sc" plan diff --json "$work/old.json" "$work/new.json"
row "statecraft plan diff (every id shifted)" "$sc" plan diff "$work/old.json" "$work/renum.json"
row "statecraft plan diff --text (ids kept)" "$sc" plan diff --text "$work/old.json" "$work/new.json"
row "diff -u (ids kept)" diff -u "$work/old.json" "$work/new.json"
