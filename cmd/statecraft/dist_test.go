package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// TestDistStamping checks `make dist` cheaply: its recipe builds every platform with CGO off and
// stamps the version and commit given (make -n, nothing built), and a binary built with those
// -X flags says them in --version.
func TestDistStamping(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	root := crashtest.RepoRoot()
	cmd := exec.Command("make", "-n", "dist", "VERSION=v9.9.9-test", "COMMIT=0123456789abcdef0123")
	cmd.Dir = root
	recipe, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n dist: %v\n%s", err, recipe)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-X main.version=v9.9.9-test -X main.commit=0123456789abcdef0123",
		"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64", "SHA256SUMS"} {
		if !strings.Contains(string(recipe), want) {
			t.Errorf("make -n dist lacks %q:\n%s", want, recipe)
		}
	}
	bin := filepath.Join(t.TempDir(), "statecraft")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version=v9.9.9-test -X main.commit=0123456789abcdef0123", "-o", bin, "./cmd/statecraft")
	build.Dir = root
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "statecraft version v9.9.9-test (commit 0123456789ab), go1."; !strings.HasPrefix(string(out), want) {
		t.Errorf("--version = %q, want %q...", out, want)
	}
}
