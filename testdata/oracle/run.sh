#!/usr/bin/env bash
# Run one oracle command with real Flink: testdata/oracle/run.sh COMMAND [ARGS...]
# Maven resolves Flink once (into ~/.m2); javac compiles the oracle; java runs it.
# Relative paths in ARGS are taken from the caller's directory.
#
# Compiled classes live in a directory named after a hash of the sources, built under a temporary
# name and renamed into place, so a run that is still going keeps its classes while another caller
# compiles a newer version; flock serialises the compiles.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
flink_version="${FLINK_VERSION:-2.3.0}"
# ORACLE_PROFILE=bench-parquet adds that Maven profile's jars (Parquet, the Hadoop client) and the
# sources under src/bench-parquet/java (the Parquet benchmark peer) in a build of its own: every
# other command runs without Hadoop on its classpath.
profile="${ORACLE_PROFILE:-}"
target="$here/target/flink-$flink_version${profile:+-$profile}"
mkdir -p "$target"
# An old Flink with its own pom (pom-1.17.xml for 1.17.x) resolves only what its fixtures need,
# so pom.xml's classpath for 2.3.0 and 1.20.0 stays as it is.
pom="$here/pom.xml"
if [ -f "$here/pom-$(echo "$flink_version" | cut -d. -f1,2).xml" ]; then
  pom="$here/pom-$(echo "$flink_version" | cut -d. -f1,2).xml"
fi
exec 9>"$target/.lock"
flock 9
if [ ! -s "$target/classpath.txt" ] || [ "$pom" -nt "$target/classpath.txt" ]; then
  mvn -B -q -f "$pom" -Dflink.version="$flink_version" ${profile:+-P"$profile"} dependency:resolve dependency:build-classpath \
    -Dmdep.outputFile="$target/classpath.txt" >&2
fi
cp="$(cat "$target/classpath.txt")"
hash="$(cd "$here" && find src -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum | cut -c1-12)"
classes="$target/classes-$hash"
if [ ! -d "$classes" ]; then
  tmp="$target/.classes-tmp-$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # A version with its own source dir (src/main/java-1.20 for 1.20.x) compiles only the shared
  # files its sources.txt lists (paths under src/main/java), each passed through its rewrites.sed
  # (renamed packages of older Flink), plus its own .java files: code written against 2.x-only
  # APIs stays out of that build.
  extra="$here/src/main/java-$(echo "$flink_version" | cut -d. -f1,2)"
  if [ -f "$extra/sources.txt" ]; then
    rm -rf "$tmp.src"
    for f in $(grep -v '^#' "$extra/sources.txt"); do
      mkdir -p "$tmp.src/$(dirname "$f")"
      sed -f "$extra/rewrites.sed" "$here/src/main/java/$f" > "$tmp.src/$f"
    done
    { find "$tmp.src" -name '*.java'; find "$extra" -name '*.java'; } > "$tmp.sources"
  else
    (cd "$here" && find src/main/java -name '*.java') | sed "s|^|$here/|" > "$tmp.sources"
  fi
  if [ -n "$profile" ]; then find "$here/src/$profile/java" -name '*.java' >> "$tmp.sources"; fi
  javac -nowarn -encoding UTF-8 --release 17 -cp "$cp" -d "$tmp" @"$tmp.sources" >&2
  if [ -d "$here/src/main/resources" ]; then cp -r "$here/src/main/resources/." "$tmp/"; fi
  rm -rf "$tmp.sources" "$tmp.src"
  mv "$tmp" "$classes"
  # Old builds go once nobody can still be running them.
  find "$target" -maxdepth 1 -name 'classes-*' ! -name "classes-$hash" -mmin +120 -exec rm -rf {} + 2>/dev/null || true
fi
flock -u 9
# One served JVM runs several judges at once (each with its own MiniCluster): give it more heap.
heap=2g
if [ "${1:-}" = serve ]; then heap=4g; fi
# ORACLE_HEAP overrides it for a job that holds more: a State Processor API benchmark peer restores
# a 10M-entry savepoint into a heap (hashmap) backend.
heap="${ORACLE_HEAP:-$heap}"
exec java -Xmx$heap -XX:+UseSerialGC \
  --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED \
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
  --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/java.net=ALL-UNNAMED \
  --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/java.time=ALL-UNNAMED \
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.text=ALL-UNNAMED \
  --add-opens=java.sql/java.sql=ALL-UNNAMED \
  -cp "$classes:$cp" dev.statecraft.oracle.Main "$@"
