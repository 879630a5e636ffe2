package gen

import "fmt"

// murmur2 is the hash of Kafka's Utils.murmur2, which the Java producer's
// default partitioner applies to a record's key.
func murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// keyPartition is the partition the Java producer's default partitioner
// sends a keyed record to: murmur2 of the key, made positive as Kafka's
// Utils.toPositive does, modulo the topic's partitions.
func keyPartition(key []byte, partitions int) int32 {
	return int32(int(murmur2(key)&0x7fffffff) % partitions)
}

func keyName(i int) []byte { return fmt.Appendf(nil, "key-%06d", i) }

// partitionKeys lists the keys (of keys in all) that the default partitioner
// puts on partition p of a topic of the given partitions, so that a key is
// found on one partition only, as in a topic a Java producer wrote.
func partitionKeys(keys, partitions int, p int32) [][]byte {
	var out [][]byte
	for i := range keys {
		if k := keyName(i); partitions <= 1 || keyPartition(k, partitions) == p {
			out = append(out, k)
		}
	}
	return out
}
