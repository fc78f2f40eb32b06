// Package sourcestate decodes and encodes the state of FLIP-27 sources in a savepoint: the
// splits each reader subtask holds and the split enumerator's checkpoint, with the Kafka
// connector's layouts (flink-connector-kafka 3.x to 5.x) decoded field by field, the legacy
// FlinkKafkaConsumer's union state (legacy.go) and FileSource's splits and enumerator (files.go),
// both read only. Other connectors' splits are listed with their serializer version and raw bytes.
//
// # Where the state is
//
// A source operator keeps its reader's splits in operator list state (mode split) named
// "SourceReaderState"; each list element is a byte[] (BytePrimitiveArraySerializer: i32 length,
// then the bytes) holding one split in SimpleVersionedSerialization's byte-array form:
//
//	+---------------------+--------------+----------------------------------------+
//	| i32 split ser. ver. | i32 length n | n bytes split payload (end of element) |
//	+---------------------+--------------+----------------------------------------+
//
// The enumerator's checkpoint is the operator's coordinator state in _metadata (an inline byte
// stream), framed by Flink's SourceCoordinator:
//
//	+------------------------+---------------------+--------------+------------------+
//	| i32 coordinator serde  | i32 enum ser. ver.  | i32 length n | n bytes payload  |
//	| version (0 or 1)       |                     |              |                  |
//	+------------------------+---------------------+--------------+------------------+
//	  version 1: nothing may follow; version 0 (Flink 1.11 to 1.12.x: the 1.12.2 fixture has it,
//	  1.12.7 writes 1): reader assignments followed, which Flink skips on restore (kept here as
//	  Trailing).
//
// # KafkaPartitionSplit, serializer version 0 (the only one)
//
//	+-------------------+---------------+--------------------+--------------------+
//	| UTF topic         | i32 partition | i64 startingOffset | i64 stoppingOffset |
//	| (u16 len + bytes) |               |                    |                    |
//	+-------------------+---------------+--------------------+--------------------+
//
// Starting offset markers: -2 earliest, -1 latest (deprecated), -3 committed, Long.MIN_VALUE
// "migrated" (the enumerator of an old state did not know it). Stopping: Long.MIN_VALUE none,
// -1 latest, -3 committed.
//
// # KafkaSourceEnumState, serializer versions 0 to 3
//
//	Which release wrote which (read from each release's KafkaSourceEnumStateSerializer, and each
//	has a fixture made by that release: testdata/flink-1.12, flink-1.17, flink-1.20, sources):
//	  v0: Flink 1.12.0 to 1.12.2 (in-tree flink-connector-kafka_2.1x)
//	  v1: Flink 1.12.3 (FLINK-21817) to 1.17.x in-tree, and connector 3.0.x
//	  v2: connector 3.1.0 (FLINK-32019) to 4.0.x
//	  v3: connector 5.0.0 (FLINK-38453)
//
//	v0: split assignments per subtask
//	  | i32 nSubtasks | i32 split ver. | nSubtasks x { i32 subtask | i32 n | n x { i32 len | split } } |
//	v1: assigned partitions
//	  | i32 n | n x { UTF topic | i32 partition } |
//	v2: with assignment status and whether the initial discovery finished
//	  | i32 n | n x { UTF topic | i32 partition | i32 status } | bool initialDiscoveryFinished |
//	v3: whole splits (so starting offsets too)
//	  | i32 n | i32 split ver. | n x { i32 len | split | i32 status } | bool initialDiscoveryFinished |
//
// Status 0 is ASSIGNED (a reader has it), 1 UNASSIGNED (discovered, not handed out yet). Versions
// 1 to 3 allow no trailing bytes (the connector refuses them); nor does this package for v0.
package sourcestate
