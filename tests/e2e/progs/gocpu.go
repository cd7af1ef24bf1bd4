// gocpu.go - CPU work in three functions, 3:2:1 by the work done, with
// Go's own CPU profile of it (runtime/pprof) written to the first
// argument: what perf and Go's profiler each see of the same run. The
// second argument is the rounds (default 400); each does fixed work, so
// the shares do not depend on how busy the machine is.
package main

import (
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
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
	// A pause of a random length (0-10 ms) before each round: Go's
	// profiler samples on the kernel's tick (4 ms at HZ=250), and a round
	// of fixed length could keep the ticks at nearly the same phase of it
	// round after round (a CI run: main.heavy 42.6 % of Go's samples for
	// 50 % of the work, light 24.2 % for 16.7 %, where perf's 1000 Hz gave
	// 50.0 and 16.7). The pause is off CPU, so neither profiler counts it.
	pause := rand.New(rand.NewSource(1))
	for i := 0; i < rounds; i++ {
		time.Sleep(time.Duration(pause.Intn(10000)) * time.Microsecond)
		heavy()
		medium()
		light()
	}
	pprof.StopCPUProfile()
	f.Close()
}
