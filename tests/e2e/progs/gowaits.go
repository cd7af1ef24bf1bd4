// gowaits.go - goroutines that wait the ways Go programs do: four contend
// for a sync.Mutex (holding it ~2 ms), one sends on a channel every 10 ms
// to another, one sleeps in time.Sleep; for SECONDS (the first argument).
// Their waits park goroutines, not threads: what the kernel sees off CPU
// is the scheduler's threads with nothing to run.
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

var sink int

func spin(d time.Duration) {
	t0 := time.Now()
	x := 0
	for time.Since(t0) < d {
		x = x*31 + 7
	}
	sink += x
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = s
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				mu.Lock()
				spin(2 * time.Millisecond)
				mu.Unlock()
			}
		}()
	}
	ch := make(chan int)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			ch <- 1
			time.Sleep(10 * time.Millisecond)
		}
		close(ch)
	}()
	go func() {
		defer wg.Done()
		for range ch {
		}
	}()
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wg.Wait()
}
