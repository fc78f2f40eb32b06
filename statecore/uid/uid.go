// Package uid computes the OperatorID Flink derives from an operator's UID.
//
// Flink (StreamGraphHasherV2.generateUserSpecifiedHash, and the State Processor API's
// OperatorIdentifier.forUid) hashes the UID's standard UTF-8 bytes with Guava's
// murmur3_128(seed 0). The 16 digest bytes, h1 then h2 each little-endian (Guava's asBytes), are
// the OperatorID's bytes as _metadata stores them, and their lowercase hex is the "uid hash".
//
//	uid "my-uid" --UTF-8--> 6d 79 2d 75 69 64 --murmur3_x64_128(seed 0)--> h1, h2
//	+-----------------------+-----------------------+
//	| h1 little-endian (8)  | h2 little-endian (8)  |   = OperatorID bytes = hex uid hash
//	+-----------------------+-----------------------+
package uid

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/spaolacci/murmur3"
)

// OperatorID returns the 16 OperatorID bytes Flink computes for uid. Go strings are taken as
// UTF-8, which is what Java's getBytes(UTF_8) produces for any valid string.
func OperatorID(uid string) [16]byte {
	h1, h2 := murmur3.Sum128WithSeed([]byte(uid), 0)
	var id [16]byte
	binary.LittleEndian.PutUint64(id[0:8], h1)
	binary.LittleEndian.PutUint64(id[8:16], h2)
	return id
}

// Hash returns the 32-hex-digit uid hash of uid, as savepoint_metadata and forUidHash show it.
func Hash(uid string) string {
	id := OperatorID(uid)
	return hex.EncodeToString(id[:])
}
