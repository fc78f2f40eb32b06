# Sourced by the bench/*.sh scripts that time statecraft on a savepoint grown from a Flink-made
# fixture (bench/migrate.sh, bench/inside.sh): the working directory, the binary, the savepoint,
# and a timing loop that also gives CPU time and peak RSS.
#
#   bench_setup           sets root (the repository), work (a temporary directory removed on
#                         exit) and sc (statecraft built from root)
#   grow_savepoint KEYS DIR
#                         writes the savepoint grown from testdata/savepoints/keyed-hashmap: its
#                         keyed-state header and every state's entry bytes are Flink's, replicated
#                         under KEYS Integer keys (0..KEYS-1) placed in the key groups Flink
#                         computes (migrate.growSavepoint). No oracle job writes one this large,
#                         so it is not itself Flink-made.
#   measure NAME RUNS CMD runs the shell string CMD RUNS times; sets NAME_wall and NAME_cpu
#                         (means, ms; CPU is user + system, the steadier figure on a shared
#                         machine) and NAME_rss (largest peak RSS, MiB)
#   ratio A B             A / B with two decimals

bench_setup() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$root" && go build -o "$work/statecraft" ./cmd/statecraft)
  sc="$work/statecraft"
}

grow_savepoint() {
  (cd "$root" && STATECRAFT_BENCH_OUT="$2" STATECRAFT_BENCH_KEYS="$1" go test -count=1 -run '^TestGrowSavepoint$' ./migrate >/dev/null)
}

measure() {
  local name="$1" n="$2" cmd="$3" wall=0 cpu=0 rss=0 t r c
  for _ in $(seq "$n"); do
    t=$(date +%s%N)
    /usr/bin/time -v -o "$work/time.txt" bash -c "$cmd"
    wall=$(( wall + ($(date +%s%N) - t) / 1000000 ))
    r=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
    [ "$r" -gt "$rss" ] && rss=$r
    c=$(awk -F: '/User time|System time/ {s += $2} END {printf "%d", s * 1000}' "$work/time.txt")
    cpu=$(( cpu + c ))
  done
  printf -v "${name}_wall" '%d' $(( wall / n ))
  printf -v "${name}_cpu" '%d' $(( cpu / n ))
  printf -v "${name}_rss" '%d' $(( rss >> 10 ))
}

ratio() { echo "scale=2; $1 / ($2 + 1)" | bc; }
