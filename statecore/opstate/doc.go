// Package opstate reads the operator-state file of a Flink savepoint: list (split), union and
// broadcast state. Every backend writes the same layout.
//
// # Where the file is
//
// For each subtask, _metadata holds a tag-4 operator-state handle: for every state its name, its
// distribution mode (0 split, 1 union, 2 broadcast) and offsets into the stream: one per list
// element, or exactly one for a broadcast state's map. There is no element count in the file;
// the offsets are the only index.
//
// # File layout
//
//	+---------------------------------------------------------------------+ offset 0
//	| i32  proxy version = 6   (OperatorBackendSerializationProxy)        |
//	| bool compressed                                                      |
//	| i16  nStates;    nStates x StateMeta     (type OPERATOR: list/union) |
//	| i16  nBroadcast; nBroadcast x StateMeta  (type BROADCAST)            |
//	+---------------------------------------------------------------------+
//	| list state body:      element element element ...                   | <- offsets[i]
//	| broadcast state body: i32 size, size x {key, value}                  | <- offsets[0]
//	+---------------------------------------------------------------------+ EOF
//
// StateMeta is the keyed package's (format 7): OPERATOR_STATE_DISTRIBUTION_MODE, and the
// VALUE_SERIALIZER (element) or KEY_SERIALIZER + VALUE_SERIALIZER (broadcast).
//
// # Compression
//
// With compression each state body is its own Snappy framed stream: the 10-byte identifier
// "FF 06 00 00 sNaPpY" and then chunks; Flink flushes the compressor before taking each offset,
// so every element starts at a chunk boundary:
//
//	+-------------+----------------------+----------------------+-----+
//	| stream id   | chunks of element 0  | chunks of element 1  | ... |
//	+-------------+----------------------+----------------------+-----+
//	              ^ offsets[0]           ^ offsets[1]
//
// An element's bytes therefore run from its offset to the next offset of any state (or the end
// of the stream); a reader decodes just those chunks, skipping a stream identifier in between.
package opstate
