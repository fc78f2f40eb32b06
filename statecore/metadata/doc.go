// Package metadata reads and writes Flink's checkpoint/savepoint `_metadata` file, byte for byte.
//
// The file is one java.io.DataOutputStream stream. Versions 3 to 6 are the ones Flink 1.11 to 2.3
// write (Flink 2.3.0's flink-runtime jar has MetadataV1..V6Serializer and writes 6); version 7
// (a regional-checkpoint reference per subtask, newer than 2.3) is read and written too. Version 2
// (Flink 1.3 to 1.10) and 1 are refused with a message.
//
// File:
//
//	+------------+------------+------------------------------------------+----------------------+
//	| magic i32  | version i32| body                                     | tail (V4+)           |
//	| 4960672D   | 3..7       |                                          | Java-serialized      |
//	+------------+------------+------------------------------------------+ CheckpointProperties |
//	                                                                       | (kept verbatim)      |
//	                                                                       +----------------------+
//	body:
//	+------------------+-----------------+----------------+--------------+------------------+
//	| checkpointId i64 | nMaster i32     | MasterState... | nOps i32     | OperatorState... |
//	+------------------+-----------------+----------------+--------------+------------------+
//
//	MasterState:
//	+--------------+---------+------------------------------------------------------+
//	| C96B1696 i32 | len i32 | version i32 | name UTF | nPayload i32 | payload bytes |
//	+--------------+---------+------------------------------------------------------+
//	                          \______________________ len bytes ____________________/
//
// OperatorState (the two strings only from V5; "" means absent):
//
//	+----------+---------+-----------------+-----------------+-------+----------+
//	| name UTF | uid UTF | id.lower i64 BE | id.upper i64 BE | par   | maxPar   |
//	+----------+---------+-----------------+-----------------+-------+----------+
//	| coordinator: StreamHandle (tag 0 or 1) | n i32 | n x subtask record      |
//	+----------------------------------------+-------+-------------------------+
//	n < 0: the operator is fully finished and no records follow.
//
//	subtask record:
//	+-----------+-----------------------------------------------+-------------------------+
//	| index i32 | SubtaskState (only when index >= 0)           | V7: hasRef u8 [ref i64] |
//	+-----------+-----------------------------------------------+-------------------------+
//	index < 0: subtask -index-1 finished; nothing follows (not even the V7 part).
//
//	SubtaskState:
//	+------------+------------------+------------+------------------+
//	| hasMgdOp i32 | [OperatorHandle] | hasRawOp i32 | [OperatorHandle] |
//	+------------+------------------+------------+------------------+
//	| KeyedHandle managed | KeyedHandle raw | nIn i32 | ChannelHandle... | nOut i32 | ChannelHandle... |
//	+---------------------+-----------------+---------+------------------+----------+------------------+
//
// Handles start with a one-byte tag; the tag numbers are shared by the three kinds of slot:
//
//	stream slot:   0 null, 1 inline bytes, 2 file (absolute), 3 key groups, 6 relative file,
//	               15 segment file, 16 empty segment file
//	keyed slot:    0 null, 3/7/12 key groups, 5/11 incremental (RocksDB), 8/14 changelog,
//	               9 changelog in-memory increment, 10/13 changelog file increment
//	operator slot: 0 null, 4 partitionable operator state, 17 file-merging operator state
//
//	1  BYTE_STREAM   | name UTF | len i32 | data [len] |
//	2  FILE          | size i64 | path UTF |                 (size first)
//	6  RELATIVE      | path UTF | size i64 |                 (path first)
//	15 SEGMENT_FILE  | start i64 | size i64 | scope i32 | path UTF | logicalFileId UTF |
//	3/7/12 KEY_GROUPS| startKG i32 | numKG i32 | offset i64 x numKG | StreamHandle | [12: id UTF] |
//	4  OPERATOR      | nStates i32 | { name UTF | mode u8 | nOff i32 | off i64 x nOff } ... | StreamHandle |
//	17 SEGMENT_OP    | same states | taskOwnedDir UTF | sharedDir UTF | isEmpty u8 | StreamHandle |
//	11 INCREMENTAL   | checkpointId i64 | backendId UTF | startKG i32 | numKG i32 | checkpointedSize i64 |
//	                 | meta StreamHandle | nShared i32 {path UTF, StreamHandle}... | nPrivate i32 {...}... |
//	                 | stateHandleId UTF |          (5: no checkpointedSize, no stateHandleId)
//	14 CHANGELOG     | startKG i32 | numKG i32 | checkpointedSize i64 | nMat i32 KeyedHandle... |
//	                 | nNonMat i32 KeyedHandle... | materializationId i64 | checkpointId i64 | id UTF |
//	                 (8: no checkpointId)
//	9  CL_BYTES      | startKG i32 | numKG i32 | from i64 | to i64 | n i32 {kg i32, len i32, bytes} | id UTF |
//	13 CL_FILE       | startKG i32 | numKG i32 | n i32 {offset i64, StreamHandle} | size i64 |
//	                 | checkpointedSize i64 | id UTF | storageId UTF |   (10: no storageId)
//
// Channel-state handles (unaligned checkpoints only; savepoints have none): V3..V5 write them
// untagged, V6+ put a type byte first (1 input, 2 output, 3 merged input, 4 merged output):
//
//	1/2     | subtask i32 | a i32 | b i32 | nOff i32 | off i64 x nOff | size i64 | StreamHandle |
//	3/4     | subtask i32 | size i64 | StreamHandle | len i32 | serialized offsets [len] |
//
// Everything random that Flink wrote (state handle ids, inline handle names, backend ids) and the
// order of operators, subtasks and state names are kept as read, so Decode followed by Encode
// gives the same bytes.
package metadata
