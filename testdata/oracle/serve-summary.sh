#!/usr/bin/env bash
# serve-summary.sh DIR: where the oracle servers' time went in a make check run, from the
# "oracle serve: done" lines each server (run.sh serve, Serve.java) logs to DIR/serve-NAME.log:
# per server the commands run and the seconds busy, then the slowest commands. The time of the
# whole suite is bounded below by the busiest server, so this says what to make faster.
set -euo pipefail
dir="$1"
shopt -s nullglob
logs=("$dir"/serve-*.log)
[ ${#logs[@]} -gt 0 ] || exit 0
for f in "${logs[@]}"; do
  name="$(basename "$f" .log)"; name="${name#serve-}"
  awk -v name="$name" '/^oracle serve: done /{n++; ms+=$4} END{printf "oracle %s: %d commands, busy %d s\n", name, n, ms/1000}' "$f"
done
echo "slowest oracle commands (ms, server, command):"
for f in "${logs[@]}"; do
  name="$(basename "$f" .log)"; name="${name#serve-}"
  sed -n 's/^oracle serve: done \([0-9]*\) ms (waited [0-9]* ms) exit \([0-9]*\): \(.*\)$/\1 '"$name"' exit=\2 \3/p' "$f"
done | sort -rn | sed -n "1,${SUMMARY_TOP:-12}p" | cut -c1-160 | sed 's/^/  /'
# (sed -n, not head: head exits after its lines, sort can then die of SIGPIPE, and pipefail
# made the whole make check fail after every test had passed; it happened once)
