#!/usr/bin/env bash
# Times `statecraft plan ttl set --all --ttl 1h` on a synthetic 5,000-node compiled plan
# (internal/plangen) against jq doing the same edit, and prints a markdown table.
#
#   bench/plan-ttl.sh [NODES] [RUNS]        defaults: 5000 nodes, 20 runs
#
# Uses hyperfine when installed, else a loop timed with date +%s%N. Installs jq with apt-get
# when it is missing. Both tools must produce the same JSON (checked with jq -S) before any
# time is reported.
set -euo pipefail
nodes="${1:-5000}"
runs="${2:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! command -v jq >/dev/null 2>&1; then
  echo "installing jq..." >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get install -y jq >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y jq >&2; }
fi

(cd "$root" && go build -o "$work/statecraft" ./cmd/statecraft)
(cd "$root" && go run ./internal/plangen/cmd/plangen -nodes "$nodes" -seed 1) > "$work/plan.json"
size=$(wc -c < "$work/plan.json")
states=$(jq '[.nodes[].state[]?] | length' "$work/plan.json")

# Each measured command is a tiny script, so hyperfine and the fallback loop run the same thing
# and no quoting is nested.
printf '#!/bin/sh\nexec "%s/statecraft" plan ttl set "%s/plan.json" --all --ttl 1h -o "%s/sc.json" 2>/dev/null\n' "$work" "$work" "$work" > "$work/sc.sh"
printf '#!/bin/sh\nexec jq %s "%s/plan.json" > "%s/jq.json"\n' "'(.nodes[].state[]?.ttl) |= \"1 h\"'" "$work" "$work" > "$work/jq.sh"
chmod +x "$work/sc.sh" "$work/jq.sh"
sc_cmd="$work/sc.sh"
jq_cmd="$work/jq.sh"

# Same result first: a benchmark of two different edits would mean nothing.
eval "$sc_cmd"
eval "$jq_cmd"
if ! cmp -s <(jq -S . "$work/sc.json") <(jq -S . "$work/jq.json"); then
  echo "statecraft and jq produce different JSON; not timing" >&2
  exit 1
fi
# statecraft keeps every other byte; jq re-prints the whole document.
sc_same=$(cmp -s <(sed 's/"ttl" : "[^"]*"/"ttl" : X/' "$work/plan.json") <(sed 's/"ttl" : "[^"]*"/"ttl" : X/' "$work/sc.json") && echo yes || echo no)
jq_same=$(cmp -s <(sed 's/"ttl" : "[^"]*"/"ttl" : X/' "$work/plan.json") <(sed 's/"ttl" : "[^"]*"/"ttl" : X/' "$work/jq.json") && echo yes || echo no)

mean_min() { # command -> "mean min" in ms
  local cmd="$1" i t0 t1 sum=0 min=""
  eval "$cmd" # warm-up
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    eval "$cmd"
    t1=$(date +%s%N)
    local d=$(((t1 - t0) / 1000))
    sum=$((sum + d))
    if [ -z "$min" ] || [ "$d" -lt "$min" ]; then min=$d; fi
  done
  awk -v s="$sum" -v n="$runs" -v m="$min" 'BEGIN { printf "%.1f %.1f\n", s / n / 1000, m / 1000 }'
}

if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/h.json" \
    -n statecraft "$sc_cmd" -n jq "$jq_cmd" >&2
  read -r sc_mean sc_min < <(jq -r '.results[0] | "\(.mean*1000) \(.min*1000)"' "$work/h.json")
  read -r jq_mean jq_min < <(jq -r '.results[1] | "\(.mean*1000) \(.min*1000)"' "$work/h.json")
  how="hyperfine, $runs runs"
else
  read -r sc_mean sc_min < <(mean_min "$sc_cmd")
  read -r jq_mean jq_min < <(mean_min "$jq_cmd")
  how="date +%s%N loop, $runs runs after one warm-up"
fi

printf '### plan ttl set --all: %s nodes, %s state entries, %s bytes (%s)\n\n' "$nodes" "$states" "$size" "$how"
printf '| tool | mean (ms) | min (ms) | other bytes unchanged |\n|---|---:|---:|---|\n'
printf '| statecraft plan ttl set --all --ttl 1h | %.1f | %.1f | %s |\n' "$sc_mean" "$sc_min" "$sc_same"
printf '| jq (.nodes[].state[]?.ttl) \\|= "1 h" | %.1f | %.1f | %s |\n' "$jq_mean" "$jq_min" "$jq_same"
