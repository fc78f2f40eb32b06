package oracletest

import (
	"path/filepath"
	"testing"
)

// TestClaim: idle servers are claimed first; with all busy, a claim gets whichever server is
// released first, and a server it waited on in vain stays free for others.
func TestClaim(t *testing.T) {
	dir := t.TempDir()
	socks := []string{filepath.Join(dir, "flink-x.1.sock"), filepath.Join(dir, "flink-x.2.sock")}
	s1, rel1, err := claim(socks)
	if err != nil {
		t.Fatal(err)
	}
	s2, rel2, err := claim(socks)
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 {
		t.Fatalf("two claims got the same idle server %s", s1)
	}
	got := make(chan string)
	go func() {
		s, rel, err := claim(socks)
		if err != nil {
			t.Error(err)
		}
		got <- s
		rel()
	}()
	rel2()
	if s := <-got; s != s2 {
		t.Fatalf("waiting claim got %s, want the released %s", s, s2)
	}
	// The waiter's pending wait on s1 is granted once s1 is released, and handed back: s1 can
	// then be claimed again (this claim would block forever otherwise).
	rel1()
	s, rel, err := claim(socks[:1])
	if err != nil || s != s1 {
		t.Fatalf("claim after release: %s, %v", s, err)
	}
	rel()
}
