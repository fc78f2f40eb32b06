// Package rocksdb reads RocksDB databases as they sit on disk, without RocksDB: block-based SST
// tables (format versions 2 to 5), the MANIFEST that says which tables are live per column family,
// and a streaming merge of those tables into the database's current key/value view. It is read-only
// and knows nothing of Flink; statecore/keyed maps Flink's key layout on top of it.
//
// Everything is read through io.ReaderAt plus a size, never through paths, so that the files may
// come from a savepoint directory, an object store or bytes inline in a _metadata file.
//
// # Block-based table (an SST file)
//
//	+--------------------------+ offset 0
//	| data block 0  + trailer  |   entries (internal key -> value), sorted by internal key
//	| data block 1  + trailer  |
//	| ...                      |
//	| meta blocks   + trailers |   "rocksdb.properties", "rocksdb.range_del", filters, ...
//	| metaindex     + trailer  |   meta block name -> block handle
//	| index         + trailer  |   one entry per data block: separator key -> block handle
//	| footer (53 bytes)        |
//	+--------------------------+ size
//
//	block handle:  varint64 offset | varint64 size        (size excludes the 5-byte trailer)
//	block trailer: u8 compression type | u32le checksum    (checksum over block bytes + type byte)
//
//	footer (format_version 1..5, 53 bytes):
//	  u8 checksum type | metaindex handle | index handle | zero padding to 41 bytes
//	  | u32le format_version | u64le magic 0x88e241b785f4cff7
//
// Checksums: CRC32c (type 1) is stored masked, ((c >> 15) | (c << 17)) + 0xa282ead8; XXH3 (type 4)
// is the low 32 bits of XXH3-64 over the block bytes XORed with type-byte × 0x6b9083d9. A block
// compressed with anything but Snappy starts with a varint32 of its uncompressed size (format
// version >= 2). Format version 6 (footer checksums, context-dependent block checksums), legacy
// footers, xxHash32/64 checksums, hash indexes, data block hash indexes, compression
// dictionaries and codecs other than none/Snappy/LZ4/LZ4HC/ZSTD are refused by name.
//
// A partitioned index (index type 2, as the ForSt backend of Flink 2.x writes) has two levels:
//
//	footer index handle -> top-level index: one entry per partition -> partition's handle
//	                       partition:       an index block as above -> data block handles
//
// Partitions are read one at a time, in order; both levels share the index's value encoding.
//
// # Blocks
//
//	entry*:  varint32 shared | varint32 non_shared | varint32 value_len
//	         | key[shared:] (non_shared bytes) | value (value_len bytes)
//	restarts: u32le offset * num_restarts | u32le num_restarts
//
// An entry's key is the previous key's first `shared` bytes followed by its own bytes; at a restart
// point shared is 0. The top bit of num_restarts marks a data-block hash index (refused).
//
// Index blocks of format version >= 4 with "rocksdb.index.value.is.delta.encoded" leave out
// value_len: a restart entry (shared == 0) holds a full block handle, any other a zigzag varint64
// size delta, the offset following on from the previous block (offset + size + 5).
//
// Data block keys are internal keys: the user key followed by u64le (sequence << 8 | type); types
// 0 Delete, 1 Put, 2 Merge, 7 SingleDelete. The range_del block holds range tombstones: internal
// key (start, seq, type 15) -> exclusive end user key.
//
// # MANIFEST
//
// A log of VersionEdit records in LevelDB's framing:
//
//	32 KiB blocks; record: u32le masked crc32c(type + payload) | u16le length | u8 type | payload
//	type 1 full, 2 first, 3 middle, 4 last (a record split across blocks); a block tail shorter
//	than the 7-byte header is zero padding.
//
//	VersionEdit: (varint32 tag, field)*
//	  1 comparator (string)   2 log number        3 next file number   4 last sequence
//	  6 deleted file (varint32 level, varint64 number)   9 prev log number   10 min log to keep
//	  103 new file: varint32 level, varint64 number, varint64 size, string smallest, string largest,
//	      varint64 smallest seq, varint64 largest seq, then custom (varint32 tag, string)* up to tag 1
//	  200 column family id    201 add column family (string name)   202 drop column family
//	  203 max column family   300 in atomic group   tags with bit 0x2000: (string) safe to skip
//
// Replaying the edits per column family gives its live files and their levels.
//
// # Merge
//
// Tables of one column family are merged by user key; for one user key the newest sequence number
// wins: a Put ends the search, Delete and SingleDelete hide everything older (RocksDB's iterator
// reads a SingleDelete as a Delete: tested on databases its Java API wrote), a range tombstone
// newer than an entry hides it, and Merge operands collect until a base value (or the end) and are
// joined oldest first with the configured delimiter, as RocksDB's StringAppendTESTOperator (the
// operator Flink installs for list state) does.
//
// # Memory
//
// A scan reads every block once, in file order, so there is no block cache: each table iterator
// holds its index block and one data block, whose read and decompression buffers are reused by
// the next block (blockBuf). A merge of T tables therefore holds about T x (index + largest data
// block) plus the range tombstones and one key's merge operands, whatever the size of the
// database; blocks are refused above MaxBlockSize.
package rocksdb
