// gocpu.go - CPU work in three functions, 3:2:1 by the work done, with
// Go's own CPU profile of it (runtime/pprof) written to the first
// argument: what perf and Go's profiler each see of the same run. The
// second argument is the rounds (default 400); each does fixed work, so
// the shares do not depend on how busy the machine is.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var sink uint64

// Each its own loop: the work is each function's own (flat) time.

//go:noinline
func heavy() {
	x := sink
	for i := 0; i < 3000000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	sink = x
}

//go:noinline
func medium() {
	x := sink
	for i := 0; i < 2000000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	sink = x
}

//go:noinline
func light() {
	x := sink
	for i := 0; i < 1000000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	sink = x
}

func main() {
	rounds := 400
	if len(os.Args) > 2 {
		if n, err := strconv.Atoi(os.Args[2]); err == nil {
			rounds = n
		}
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	// 1000 Hz (the default is 100): enough samples for shares within a point
	runtime.SetCPUProfileRate(1000)
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	for i := 0; i < rounds; i++ {
		heavy()
		medium()
		light()
	}
	pprof.StopCPUProfile()
	f.Close()
}
