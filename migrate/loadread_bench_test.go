package migrate

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkLoadWorker measures one load worker encoding the lines of a savepoint's dump
// (STATECRAFT_BENCH_SP: the savepoint; its dump at $STATECRAFT_BENCH_SP.dump.jsonl, as
// bench/write.sh keeps it), the first 64 MiB of it, in the blocks readBlocks hands out.
func BenchmarkLoadWorker(b *testing.B) {
	dir := os.Getenv("STATECRAFT_BENCH_SP")
	if dir == "" {
		b.Skip("STATECRAFT_BENCH_SP is not set (a savepoint with its dump beside it)")
	}
	sp := open(b, dir)
	s := &session{src: sp, m: sp.Metadata}
	ops, labels, err := s.loadOps()
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(dir + ".dump.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 64<<20)
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF {
		b.Fatal(err)
	}
	data = data[:bytes.LastIndexByte(data[:n], '\n')+1]
	lines := bytes.Count(data, []byte{'\n'})
	w := newLoadWorker("data.jsonl", ops, labels, true)
	bt := &loadBatch{}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		for p := 0; p < len(data); {
			end := min(len(data), p+loadBlock)
			if i := bytes.LastIndexByte(data[p:end], '\n'); end < len(data) && i >= 0 {
				end = p + i + 1
			}
			bt.reset()
			bt.data, bt.first = data[p:end], 1
			w.batch(bt)
			if bt.err != nil {
				b.Fatal(bt.err)
			}
			p = end
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*lines), "cpu-ns/line")
}

// cpuTime is the process's CPU time (user and system) in nanoseconds: on a shared machine the
// steadier measure.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkTemplateMatch measures lineTemplate.match alone on the bench dump's first lines.
func BenchmarkTemplateMatch(b *testing.B) {
	dir := os.Getenv("STATECRAFT_BENCH_SP")
	if dir == "" {
		b.Skip("STATECRAFT_BENCH_SP is not set (a savepoint with its dump beside it)")
	}
	f, err := os.Open(dir + ".dump.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	size := 16 << 20
	if v, err := strconv.Atoi(os.Getenv("STATECRAFT_BENCH_KIB")); err == nil {
		size = v << 10
	}
	data := make([]byte, size)
	n, _ := io.ReadFull(f, data)
	lines := bytes.SplitAfter(data[:bytes.LastIndexByte(data[:n], '\n')+1], []byte{'\n'})
	lines = lines[:len(lines)-1]
	var tmpls [2]lineTemplate
	var r rawLine
	k := 0
	for _, l := range lines {
		if !tmpls[0].match(l, &r) && !tmpls[1].match(l, &r) && scanFlat(l, &r, nil) {
			tmpls[k].learn(l, &r)
			k = 1 - k
		}
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	matched := 0
	for range b.N {
		for _, l := range lines {
			if tmpls[0].match(l, &r) || tmpls[1].match(l, &r) {
				matched++
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*len(lines)), "cpu-ns/line")
	b.ReportMetric(float64(matched)/float64(b.N*len(lines)), "matched")
}
