#!/usr/bin/env bash
# Run one oracle command with real Flink: testdata/oracle/run.sh COMMAND [ARGS...]
# Maven resolves Flink once (into ~/.m2); javac compiles the oracle; java runs it.
# Compiles are serialised with flock so concurrent callers do not trip over each other.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
flink_version="${FLINK_VERSION:-2.3.0}"
target="$here/target/flink-$flink_version"
mkdir -p "$target"
exec 9>"$target/.lock"
flock 9
if [ ! -s "$target/classpath.txt" ] || [ pom.xml -nt "$target/classpath.txt" ]; then
  mvn -B -q -Dflink.version="$flink_version" dependency:resolve dependency:build-classpath \
    -Dmdep.outputFile="$target/classpath.txt" >&2
fi
cp="$(cat "$target/classpath.txt")"
stamp="$target/classes/.stamp"
if [ ! -f "$stamp" ] || [ -n "$(find src -newer "$stamp" -type f | head -1)" ]; then
  rm -rf "$target/classes"
  mkdir -p "$target/classes"
  find src/main/java -name '*.java' > "$target/sources.txt"
  javac -nowarn -encoding UTF-8 --release 17 -cp "$cp" -d "$target/classes" @"$target/sources.txt" >&2
  if [ -d src/main/resources ]; then cp -r src/main/resources/. "$target/classes/"; fi
  touch "$stamp"
fi
flock -u 9
exec java -Xmx2g -XX:+UseSerialGC \
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
  -cp "$target/classes:$cp" dev.statecraft.oracle.Main "$@"
