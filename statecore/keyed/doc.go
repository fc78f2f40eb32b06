// Package keyed reads and writes the canonical keyed-state file of a Flink savepoint (the
// "unified binary format" both the hashmap and the RocksDB backend write for savepoints since
// Flink 1.15), and decodes its entries into keys, namespaces, map keys, values and timers.
//
// # Where the file is
//
// For each subtask, _metadata holds a tag-7 key-groups handle: the subtask's key-group range, one
// absolute offset per key group (0 = the key group is empty) and the stream holding the file (a
// file next to _metadata, or bytes inlined in it). The header always starts at offset 0.
//
// # File layout
//
//	+--------------------------------------------------------------------+ offset 0
//	| i32  proxy version = 6   (KeyedBackendSerializationProxy)          |
//	| bool compressed          (Snappy framing of every key-group block) |
//	| key serializer snapshot  (i32 2, UTF class, i32 version, payload)  |
//	| i16  numStates                                                     |
//	| numStates x StateMeta    (state id = index in this list)           |
//	+--------------------------------------------------------------------+
//	| key-group block of the first non-empty key group                   | <- offset[kg]
//	| ...                                                                |
//	+--------------------------------------------------------------------+ EOF, no trailer
//
//	StateMeta (format 7):
//	+----------+--------------------+--------------+---------------------------+
//	| UTF name | i32 type (ordinal) | i32 nOptions | nOptions x {UTF k, UTF v}  |
//	+----------+--------------------+--------------+---------------------------+
//	| i32 nSerializers | nSerializers x {UTF key, serializer snapshot}         |
//	+------------------+-------------------------------------------------------+
//	type 0 KEY_VALUE: KEYED_STATE_TYPE = VALUE|LIST|MAP|REDUCING|AGGREGATING,
//	                  NAMESPACE_SERIALIZER, VALUE_SERIALIZER (the whole state's serializer)
//	type 3 PRIORITY_QUEUE (timers "_timer_state/event_*", "_timer_state/processing_*"):
//	                  VALUE_SERIALIZER = TimerSerializer [key, namespace]
//
// Serializer snapshots carry no length; package serializer parses them.
//
// # Key-group block
//
//	+-------------+------------------------------+-------------+-----+---------------+
//	| i16 stateId | entries of that state        | i16 stateId | ... | i16 0xFFFF    |
//	+-------------+------------------------------+-------------+-----+---------------+
//	entry := +-------------+-----+---------------+-------+
//	         | i32 keyLen  | key | i32 valueLen  | value |
//	         +-------------+-----+---------------+-------+
//
// The last entry of a state's run has bit 0x80 set in its first key byte (the key-group prefix,
// whose top bit is otherwise 0); after it comes the next state id or 0xFFFF. There are no
// counts. With compression the block, from the first state id to 0xFFFF, is one Snappy framed
// stream (xerial framing: "sNaPpY" identifier, chunks of at most 64 KiB) starting at the offset.
//
// # Key and value bytes
//
//	key   := kg (1 byte if maxParallelism <= 128, else 2, big-endian)
//	         K [len(K)] NS [len(NS)] [map user key]
//	         (the lengths only when key and namespace serializers are both variable-sized;
//	         little-endian base-256 without markers)
//	timer := kg, i64 timestamp ^ 0x8000000000000000, K, NS          value: empty
//	value := VALUE/REDUCING/AGGREGATING: the value serializer's bytes
//	         LIST: E1 0x2C E2 0x2C ... En (element serializer's bytes, ',' between)
//	         MAP:  bool isNull, [user value]
//	         TTL:  an i64 last-access timestamp in front of each value, list element or map value
//
// Entries keep their raw key and value bytes next to the decoded values, and Writer writes
// blocks back (Snappy framing with Flink's parameters), so that key groups can be moved or
// re-prefixed without decoding values.
package keyed
