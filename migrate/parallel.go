package migrate

import (
	"runtime"
	"sync"
)

// workers is how many goroutines run a rescale's or a digest's independent tasks: one per CPU
// Go may use (GOMAXPROCS), so a 2-core machine reads, hashes and writes two files at once.
func workers(tasks int) int {
	return max(1, min(tasks, runtime.GOMAXPROCS(0)))
}

// parallel runs fn(0) ... fn(n-1) on a bounded pool of workers and returns the error of the
// lowest-numbered task that failed, so that the error a run reports does not depend on
// scheduling. Tasks are handed out in order; once task i fails, tasks above i that have not
// started are skipped (their errors could not be reported), while those below i still run,
// since one of them may fail too and its error is then the one reported.
func parallel(n int, fn func(i int) error) error {
	if n == 1 || workers(n) == 1 {
		for i := 0; i < n; i++ {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var mu sync.Mutex
	next, failed := 0, n // failed: lowest failing task so far
	var wg sync.WaitGroup
	for w := workers(n); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				if i >= n || i > failed {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				if err := fn(i); err != nil {
					errs[i] = err
					mu.Lock()
					failed = min(failed, i)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
