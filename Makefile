# statecraft: `make check` is the one test command (CI runs it through .ci/run).
SHELL := /bin/bash
GO ?= go
FLINK_VERSION ?= 2.3.0
ORACLE := testdata/oracle/run.sh
export FLINK_VERSION

.PHONY: all build man dist check fmt-check vet test oracle-check fixtures bench demo clean fuzz fuzz-brief

all: build

build:
	$(GO) build -o bin/statecraft ./cmd/statecraft

# Release binaries: static (CGO off), for linux and darwin on amd64 and arm64, with the version
# (git describe) and commit stamped, and their SHA-256 sums in dist/SHA256SUMS. Needs only Go
# (and the Go module proxy for the dependencies); not part of check (four full builds).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DIST_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
dist:
	rm -rf dist && mkdir -p dist
	@set -e; for p in $(DIST_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  echo "build dist/statecraft-$(VERSION)-$$os-$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath \
	    -ldflags "-s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)" \
	    -o dist/statecraft-$(VERSION)-$$os-$$arch ./cmd/statecraft; done
	cd dist && if command -v sha256sum >/dev/null; then sha256sum statecraft-*; else shasum -a 256 statecraft-*; fi > SHA256SUMS
	@cat dist/SHA256SUMS

# Man pages generated from the command definitions, one per command and help topic.
MANDIR ?= bin/man
man: build
	mkdir -p $(MANDIR)
	bin/statecraft man $(MANDIR)

# Everything a change must pass: formatting, vet, the brief fuzzing, and every test, the unit tests
# and the oracle conformance tests (*Oracle*, in which real Flink judges what statecraft writes) in
# one go test run. The oracle servers start first and warm up while fuzz-brief runs, and the
# judges then run alongside the CPU-bound unit tests of other packages.
check: fmt-check vet
	@set -e; $(ORACLE_START); \
	$(MAKE) --no-print-directory fuzz-brief; echo "fuzz-brief: $$SECONDS s"; \
	$(ORACLE_WAIT); \
	t=$$SECONDS; rc=0; $(GO) build -o "$$dir/testsummary" ./internal/testsummary; \
	STATECRAFT_ORACLE=1 STATECRAFT_ORACLE_SERVER="$$dir" $(GO) test -json -count=1 -timeout 60m -parallel $(ORACLE_PARALLEL) ./... \
	  | "$$dir/testsummary" -top 20 || rc=$$?; \
	echo "go test (unit and oracle): $$((SECONDS - t)) s"; \
	testdata/oracle/serve-summary.sh "$$dir"; exit $$rc

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test:
	$(GO) test ./...

# Tests named *Oracle* run only with STATECRAFT_ORACLE=1: they call the Java oracle (Flink
# $(FLINK_VERSION) in a local MiniCluster, and Flink 1.20.0 for the 1.20 cases) to load the plans
# statecraft writes and restore the savepoints it writes. Long-lived oracle JVMs serve every test
# (run.sh serve; internal/oracletest picks an idle one): Java, Flink's classes and the JIT warm up
# once per server, not once per judge. A server runs one command at a time. Many commands spend
# much of their time waiting, not computing (the plan TTL judges sleep 49 s in all to prove
# expiry; Kafka, S3 and checkpoint waits), so there is one more server for Flink $(FLINK_VERSION)
# than cores, and go test runs as many oracle tests of a package at once (ORACLE_PARALLEL); one
# server for 1.20.0. Each run prints the servers' busy time (serve-summary.sh) to check the
# balance. The servers watch this shell's pid and stop with it.
# TestOracleJudgeSelfTests proves the savepoint judge rejects a changed value, a dropped operator,
# a wrong max parallelism, and a Row/POJO field change that only the expectation declares.
ORACLE_SERVERS ?= $(FLINK_VERSION).1 $(FLINK_VERSION).2 $(FLINK_VERSION).3 1.20.0.1
ORACLE_PARALLEL ?= 3
ORACLE_RUN ?= Oracle
ORACLE_PKGS ?= ./...
# Shell snippets of one recipe: start the servers in a temporary directory ($$dir), stopped and
# removed when the recipe's shell exits; wait until each listens (or stop if one died).
ORACLE_START = dir="$$(mktemp -d)"; pids=""; \
	trap 'kill $$pids 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$$dir"' EXIT; \
	for s in $(ORACLE_SERVERS); do \
	  FLINK_VERSION=$${s%.*} $(ORACLE) serve "$$dir/flink-$$s.sock" $$$$ > "$$dir/serve-$$s.log" 2>&1 & pids="$$pids $$!"; \
	done
ORACLE_WAIT = for s in $(ORACLE_SERVERS); do \
	  until [ -S "$$dir/flink-$$s.sock" ]; do \
	    for p in $$pids; do kill -0 $$p 2>/dev/null || { echo "an oracle server did not start:"; tail -n 30 "$$dir"/serve-*.log; exit 1; }; done; \
	    sleep 0.2; \
	  done; \
	done; \
	echo "oracle servers ready: $(ORACLE_SERVERS)"
oracle-check:
	@set -e; $(ORACLE_START); $(ORACLE_WAIT); \
	rc=0; STATECRAFT_ORACLE=1 STATECRAFT_ORACLE_SERVER="$$dir" $(GO) test -count=1 -timeout 60m -run '$(ORACLE_RUN)' $(ORACLE_PKGS) || rc=$$?; \
	testdata/oracle/serve-summary.sh "$$dir"; exit $$rc

# Fuzz targets (package:Target), see FUZZING.md. `make fuzz` runs each for FUZZTIME (one worker
# each, one after the other: the machine is shared); `make check` runs each for FUZZTIME_BRIEF so
# that a regression of a past finding shows in CI. The brief budget is an execution count, not a
# duration: Go 1.26 can fail a duration-bounded run with "context deadline exceeded" when the
# machine is busy (golang/go#75804; FUZZING.md).
FUZZ_TARGETS := ./ttl:FuzzParseFlink ./ttl:FuzzParseInput ./plan:FuzzPlanTTLEdit \
	./statecore/metadata:FuzzDecode ./statecore/keyed:FuzzKeyedStream \
	./statecore/opstate:FuzzOperatorState ./migrate:FuzzParseScript \
	./statecore/rocksdb:FuzzBlock ./statecore/rocksdb:FuzzManifest ./statecore/metadata:FuzzIncrementalHandle \
	./statecore/sourcestate:FuzzSourceState ./migrate:FuzzLineDecoder ./migrate:FuzzLoadFastPath \
	./migrate:FuzzCSVBlocks
FUZZTIME ?= 10m
FUZZTIME_BRIEF ?= 100x
FUZZ_PARALLEL ?= 1
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do echo "fuzz $${t} for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZ_PARALLEL) "$${t%%:*}"; done
fuzz-brief:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_BRIEF)

# Regenerate every fixture with real Flink (needs Java 17 and Maven; downloads Flink once).
# The catalogue programs of the Flink 1.20 set: compiled by 1.20 as they are, and as runnable twins
# (runnable-NAME) by both versions for the upgrade evidence.
UPGRADE_PROGRAMS := changelog-normalize dedup-keep-first dedup-keep-last dedup-then-aggregate group-aggregate \
	group-aggregate-ttl-config interval-join join-inner join-left join-state-ttl-hint over-aggregate statement-set \
	top-n window-aggregate

TYPE_TWINS := window-session:window-aggregate group-window:window-aggregate \
	top-n-update:top-n dedup-rowtime:window-aggregate top-n-retract:top-n over-range:over-aggregate

fixtures:
	$(ORACLE) plans testdata/plans
	$(ORACLE) durations testdata/durations/inputs.txt > testdata/durations/flink-$(FLINK_VERSION).tsv
	$(ORACLE) savepoints testdata/savepoints
	# map state under a user window statecraft cannot decode, some of whose keys split two ways
	# into namespace and user key (made only by name: dump refuses those entries)
	$(ORACLE) savepoints testdata/savepoints-refused native-slot-window-fired
	$(ORACLE) sql-savepoint testdata/savepoints sql-group-aggregate
	# an aggregate with state-backed data views (COUNT DISTINCT, MIN over retractions) for
	# savepoint create --spec: its plan, and Flink's savepoint of it
	$(ORACLE) plans testdata/specs --sql sql-distinct-aggregate testdata/specs/sql-distinct-aggregate.sql
	$(ORACLE) sql-savepoint testdata/specs sql-distinct-aggregate-savepoint testdata/specs/sql-distinct-aggregate.json \
		testdata/specs/sql-distinct-aggregate.savepoint.json
	# COUNT(DISTINCT) over STRING, VARCHAR(20) and CHAR(3) columns: the views keyed by strings
	$(ORACLE) plans testdata/specs --sql sql-distinct-string testdata/specs/sql-distinct-string.sql
	$(ORACLE) sql-savepoint testdata/specs sql-distinct-string-savepoint testdata/specs/sql-distinct-string.json \
		testdata/specs/sql-distinct-string.savepoint.json
	# COUNT(DISTINCT) over DECIMAL(10, 2) and TIMESTAMP(3) columns: views keyed by DecimalData, TimestampData
	$(ORACLE) plans testdata/specs --sql sql-distinct-decimal testdata/specs/sql-distinct-decimal.sql
	$(ORACLE) sql-savepoint testdata/specs sql-distinct-decimal-savepoint testdata/specs/sql-distinct-decimal.json \
		testdata/specs/sql-distinct-decimal.savepoint.json
	# MIN(s), MAX(c), MIN(d), MAX(t) over retractions of STRING, VARCHAR(20), DECIMAL(10, 2) and
	# TIMESTAMP(3) columns: the agg<i>$map views keyed by StringData, DecimalData and TimestampData
	$(ORACLE) plans testdata/specs --sql sql-retract-minmax testdata/specs/sql-retract-minmax.sql
	$(ORACLE) sql-savepoint testdata/specs sql-retract-minmax-savepoint testdata/specs/sql-retract-minmax.json \
		testdata/specs/sql-retract-minmax.savepoint.json
	# MAX(c) over retractions of a CHAR(3) column: agg0$map keyed by StringData (CHAR(3) NOT NULL)
	$(ORACLE) plans testdata/specs --sql sql-retract-minmax-char testdata/specs/sql-retract-minmax-char.sql
	$(ORACLE) sql-savepoint testdata/specs sql-retract-minmax-char-savepoint testdata/specs/sql-retract-minmax-char.json \
		testdata/specs/sql-retract-minmax-char.savepoint.json
	# LISTAGG(DISTINCT s, '-'): a DISTINCT view keyed by a row of its two argument columns
	$(ORACLE) plans testdata/specs --sql sql-distinct-columns testdata/specs/sql-distinct-columns.sql
	$(ORACLE) sql-savepoint testdata/specs sql-distinct-columns-savepoint testdata/specs/sql-distinct-columns.json \
		testdata/specs/sql-distinct-columns.savepoint.json
	$(ORACLE) metadata-versions testdata/savepoints testdata/metadata-versions
	$(ORACLE) metadata-handles testdata/metadata-handles
	$(ORACLE) native-checkpoints testdata/checkpoints
	$(ORACLE) snapshot-kinds testdata/checkpoints
	$(ORACLE) native-deletes testdata/checkpoints
	$(ORACLE) native-rescaled-checkpoint testdata/checkpoints
	$(ORACLE) gc-leftovers testdata/checkpoints
	$(ORACLE) named-window-checkpoint testdata/checkpoints
	# SingleDelete records (Flink never writes one) by the RocksDB Java API Flink bundles: the
	# FRocksDB of 2.3.0 (8.10) and of 1.20.0 (6.20.3), into testdata/rocksdb/single-delete-VERSION/
	$(ORACLE) rocksdb-single-delete testdata/rocksdb
	FLINK_VERSION=1.20.0 $(ORACLE) rocksdb-single-delete testdata/rocksdb
	# TTL state cleaned up by RocksDB's compaction filter, all expired at snapshot time: a native
	# savepoint and an incremental checkpoint directory of one job
	$(ORACLE) ttl-compaction testdata/savepoints testdata/checkpoints
	$(ORACLE) uid-hashes testdata/uids/inputs.txt > testdata/uids/flink-2.3.0.tsv
	$(ORACLE) upgrade-fixture testdata/upgrades
	$(ORACLE) kafka-savepoint testdata/sources
	# the same KafkaSource job with every state chunk in a file beside _metadata (migrate offsets
	# carries the files of unchanged subtasks over)
	$(ORACLE) kafka-files-savepoint testdata/sources
	# a Flink SQL job reading Kafka (the connector's table source) and its compiled plan
	$(ORACLE) kafka-sql-savepoint testdata/sources
	# a FileSource part way through a file (its input files are made in that directory, not committed)
	$(ORACLE) file-source-savepoint testdata/sources /tmp/statecraft-file-source-input
	# a FLIP-27 source that is neither Kafka's nor FileSource's (DataGeneratorSource): listed raw
	$(ORACLE) number-source-savepoint testdata/sources
	# Flink 1.20 set (1.20.0: the newest 1.20.x with flink-state-processor-api on Maven Central)
	FLINK_VERSION=1.20.0 $(ORACLE) plans testdata/flink-1.20/plans $(UPGRADE_PROGRAMS)
	FLINK_VERSION=1.20.0 $(ORACLE) kafka-savepoint testdata/flink-1.20/sources
	# Flink 1.17 (pom-1.17.xml, connector 3.1.0-1.17): operator state proxy version 5, and the legacy
	# FlinkKafkaConsumer's union state (testdata/flink-1.17/README.md)
	FLINK_VERSION=1.17.2 $(ORACLE) kafka-savepoint testdata/flink-1.17/sources
	FLINK_VERSION=1.17.2 $(ORACLE) kafka-legacy-savepoint testdata/flink-1.17/sources
	# Flink 1.12 (pom-1.12.xml, its in-tree connector): KafkaSource enumerator state version 0
	# (1.12.0-1.12.2 wrote it) and version 1 (1.12.3 on) (testdata/flink-1.12/README.md)
	FLINK_VERSION=1.12.2 $(ORACLE) kafka-old-source-savepoint testdata/flink-1.12/sources-1.12.2
	FLINK_VERSION=1.12.7 $(ORACLE) kafka-old-source-savepoint testdata/flink-1.12/sources-1.12.7
	FLINK_VERSION=1.20.0 $(ORACLE) savepoints testdata/flink-1.20/savepoints keyed-hashmap keyed-hashmap-compressed keyed-rocksdb types-hashmap window-hashmap operator-state \
		native-rocksdb native-types-incremental native-rescaled native-named-window native-ttl-inline native-window-maxpar-256
	FLINK_VERSION=1.20.0 $(ORACLE) snapshot-kinds testdata/flink-1.20/checkpoints hashmap-full rocksdb-full file-merged
	FLINK_VERSION=1.20.0 $(ORACLE) native-checkpoints testdata/flink-1.20/checkpoints
	FLINK_VERSION=1.20.0 $(ORACLE) native-rescaled-checkpoint testdata/flink-1.20/checkpoints
	# 1.20 -> 2.3 upgrade evidence (testdata/flink-1.20/README.md): runnable twins of the catalogue
	# programs compiled by both versions, and each old plan stopped with a savepoint by Flink 1.20
	FLINK_VERSION=1.20.0 $(ORACLE) plans testdata/flink-1.20/upgrades/old $(addprefix runnable-,$(UPGRADE_PROGRAMS))
	$(ORACLE) plans testdata/flink-1.20/upgrades/new $(addprefix runnable-,$(UPGRADE_PROGRAMS))
	for p in $(UPGRADE_PROGRAMS); do FLINK_VERSION=1.20.0 $(ORACLE) sql-savepoint testdata/flink-1.20/savepoints upgrade-$$p \
		testdata/flink-1.20/upgrades/old/runnable-$$p.json testdata/flink-1.20/upgrades/specs/$$p.json || exit 1; done
	# 1.20 twins of type-catalogue bases (TYPE_TWINS, base:program): the base's SQL
	# (upgrades/types-savepoints/<base>.sql) compiled by both versions and stopped with a savepoint
	# by 1.20 on the base's spec (its own in upgrades/types-specs, else its program's)
	for t in $(TYPE_TWINS); do b=$${t%%:*}; spec=testdata/upgrades/types-specs/$$b.json; \
		[ -f $$spec ] || spec=testdata/flink-1.20/upgrades/specs/$${t#*:}.json; \
		FLINK_VERSION=1.20.0 $(ORACLE) plans testdata/flink-1.20/upgrades/old --sql runnable-$$b testdata/upgrades/types-savepoints/$$b.sql && \
		$(ORACLE) plans testdata/flink-1.20/upgrades/new --sql runnable-$$b testdata/upgrades/types-savepoints/$$b.sql && \
		FLINK_VERSION=1.20.0 $(ORACLE) sql-savepoint testdata/flink-1.20/savepoints upgrade-$$b \
			testdata/flink-1.20/upgrades/old/runnable-$$b.json $$spec || exit 1; done
	# type-aware restore evidence (issue 18): changed queries restored from upgrades/agg-filter-added's
	# savepoint, from the 1.20 savepoints above and from 2.3 savepoints it takes into
	# upgrades/types-savepoints (TYPE_CATALOGUE_ONLY=REGEX: only the cases it matches)
	$(ORACLE) type-catalogue testdata/upgrades/types testdata/upgrades/agg-filter-added/savepoint testdata/upgrades/agg-filter-added/spec.json testdata/flink-1.20

bench:
	bench/run.sh

# statecraft's main job on bundled example data: a real Flink 2.3.0 plan and savepoint.
demo: build
	@echo '$$ statecraft plan ttl list testdata/plans/join-inner.json'
	@bin/statecraft plan ttl list testdata/plans/join-inner.json
	@echo; echo '$$ statecraft plan ttl set testdata/plans/join-inner.json --node 6:leftState --ttl 90m --set 6:rightState=1d --dry-run'
	@bin/statecraft plan ttl set testdata/plans/join-inner.json --node 6:leftState --ttl 90m --set 6:rightState=1d --dry-run
	@echo; echo '$$ statecraft savepoint inspect testdata/savepoints/keyed-hashmap'
	@bin/statecraft savepoint inspect testdata/savepoints/keyed-hashmap
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	echo; echo '$$ statecraft migrate rescale testdata/savepoints/keyed-hashmap OUT --max-parallelism 256'; \
	bin/statecraft migrate rescale testdata/savepoints/keyed-hashmap "$$tmp/out" --max-parallelism 256 && \
	echo && bin/statecraft savepoint inspect "$$tmp/out"

clean:
	rm -rf bin dist testdata/oracle/target
