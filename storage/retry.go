package storage

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// Retries of the stores whose HTTP statecraft sends itself (GCS): throttling (429), timeouts
// (408), server errors (5xx) and network failures are retried with jittered exponential backoff,
// at most maxAttempts times and never waiting more than maxBackoff between two: a long
// migration rides out throttling, a dead server stops it within about a minute.
const (
	maxAttempts  = 8
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 10 * time.Second
)

// attempts is maxAttempts, or STATECRAFT_MAX_ATTEMPTS when that is a whole number of at least
// 1 (tests that kill a server set 2, so that a run against a dead server fails at once).
func attempts() int {
	if n, err := strconv.Atoi(os.Getenv("STATECRAFT_MAX_ATTEMPTS")); err == nil && n >= 1 {
		return n
	}
	return maxAttempts
}

// retryStatus reports whether an HTTP status is worth another attempt.
func retryStatus(code int) bool {
	return code == 408 || code == 429 || code >= 500
}

// retryErr reports whether a failed request (a transport error: refused connection, reset,
// timeout, broken body) is worth another attempt: always, unless the caller gave up.
func retryErr(ctx context.Context) bool { return ctx.Err() == nil }

// wait sleeps before retry n (1 for the first retry), or returns the context's error.
func wait(ctx context.Context, n int) error {
	d := firstBackoff << min(n-1, 20)
	d = min(d, maxBackoff)
	d = d/2 + rand.N(d/2+1) // jitter, so that parallel uploads do not retry in lockstep
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
