// Package keygroup computes where Flink puts a key: its Java hashCode(), Flink's murmur mix of
// that hash, the key group (hash % maxParallelism), and which subtask owns a key group.
//
//	key --hashCode()--> h (int32) --MathUtils.murmurHash--> m >= 0 --% maxParallelism--> key group
//	key group kg --kg * parallelism / maxParallelism--> subtask index
//
// Subtask i of parallelism p owns the contiguous range
//
//	[ceil(i*maxP/p), floor(((i+1)*maxP - 1)/p)]
//
// All arithmetic follows Java's 32-bit int (wrapping multiplication, arithmetic shifts), checked
// against Flink 2.3.0's MathUtils and KeyGroupRangeAssignment.
package keygroup

import (
	"fmt"
	"math/bits"
)

// Bounds of parallelism and max parallelism (KeyGroupRangeAssignment).
const (
	DefaultLowerBoundMaxParallelism = 1 << 7  // 128
	UpperBoundMaxParallelism        = 1 << 15 // 32768, inclusive
)

// MurmurHash is Flink's MathUtils.murmurHash(int): murmur3_32 of one 4-byte block with seed 0,
// mapped to a non-negative int (Integer.MIN_VALUE maps to 0).
func MurmurHash(code int32) int32 {
	k := uint32(code)
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	k *= 0x1b873593
	k = bits.RotateLeft32(k, 13)
	k = k*5 + 0xe6546b64
	k ^= 4
	k = fmix32(k)
	c := int32(k)
	switch {
	case c >= 0:
		return c
	case c != -1<<31:
		return -c
	default:
		return 0
	}
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// ForHash is KeyGroupRangeAssignment.computeKeyGroupForKeyHash: the key group of a key whose
// Java hashCode() is hash. maxParallelism must be positive.
func ForHash(hash int32, maxParallelism int32) int32 {
	return MurmurHash(hash) % maxParallelism
}

// ForKey is ForHash(HashCode(key)); see HashCode for the Go types it accepts.
func ForKey(key any, maxParallelism int32) (int32, error) {
	if err := checkParallelism(maxParallelism); err != nil {
		return 0, err
	}
	h, err := HashCode(key)
	if err != nil {
		return 0, err
	}
	return ForHash(h, maxParallelism), nil
}

// OperatorIndex is computeOperatorIndexForKeyGroup: the subtask that owns key group kg.
func OperatorIndex(maxParallelism, parallelism, kg int32) int32 {
	return int32(int64(kg) * int64(parallelism) / int64(maxParallelism))
}

// Range is an inclusive key-group range.
type Range struct{ Start, End int32 }

// Len is the number of key groups in the range.
func (r Range) Len() int32 { return r.End - r.Start + 1 }

// Contains reports whether kg is in the range.
func (r Range) Contains(kg int32) bool { return kg >= r.Start && kg <= r.End }

func (r Range) String() string { return fmt.Sprintf("[%d, %d]", r.Start, r.End) }

// RangeForOperator is computeKeyGroupRangeForOperatorIndex: the key groups subtask index owns.
func RangeForOperator(maxParallelism, parallelism, index int32) (Range, error) {
	if err := checkParallelism(parallelism); err != nil {
		return Range{}, err
	}
	if err := checkParallelism(maxParallelism); err != nil {
		return Range{}, fmt.Errorf("max parallelism: %w", err)
	}
	if maxParallelism < parallelism {
		return Range{}, fmt.Errorf("maximum parallelism %d must not be smaller than parallelism %d", maxParallelism, parallelism)
	}
	if index < 0 || index >= parallelism {
		return Range{}, fmt.Errorf("subtask index %d out of range [0, %d)", index, parallelism)
	}
	i, p, m := int64(index), int64(parallelism), int64(maxParallelism)
	return Range{Start: int32((i*m + p - 1) / p), End: int32(((i+1)*m - 1) / p)}, nil
}

// DefaultMaxParallelism is computeDefaultMaxParallelism: parallelism + parallelism/2 rounded up
// to a power of two, clamped to [128, 32768]. Flink uses it when a job sets no max parallelism.
func DefaultMaxParallelism(parallelism int32) (int32, error) {
	if err := checkParallelism(parallelism); err != nil {
		return 0, err
	}
	v := roundUpToPowerOfTwo(parallelism + parallelism/2)
	return min(max(v, DefaultLowerBoundMaxParallelism), UpperBoundMaxParallelism), nil
}

func roundUpToPowerOfTwo(x int32) int32 {
	x--
	x |= x >> 1
	x |= x >> 2
	x |= x >> 4
	x |= x >> 8
	x |= x >> 16
	return x + 1
}

func checkParallelism(p int32) error {
	if p <= 0 || p > UpperBoundMaxParallelism {
		return fmt.Errorf("operator parallelism not within bounds: %d (want 1..%d)", p, UpperBoundMaxParallelism)
	}
	return nil
}
