package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromiumFlags keep headless Chromium from its own background traffic as far as flags can;
// what it still sends (update checks, accounts) is browser-initiated and told apart below.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0"}

// chromiumLoad opens page in a fresh headless Chromium and returns the DOM it rendered, the
// console messages it logged and the URLs the page itself requested (from Chromium's net log:
// requests whose initiator is an origin; the browser's own have "not an origin").
func chromiumLoad(t *testing.T, bin, page string) (dom string, console, requests []string) {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "net.json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard, not a speed check
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{}, chromiumFlags...),
		"--user-data-dir="+filepath.Join(dir, "profile"), "--log-net-log="+netlog, "--dump-dom", "file://"+page)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("net log: %v", err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
			} `json:"params"`
		} `json:"events"`
	}
	// Chromium may be stopped before it closes the JSON; the events written are what counts.
	if err := json.Unmarshal(raw, &log); err != nil {
		s := strings.TrimRight(strings.TrimSpace(string(raw)), ",") + "]}"
		if err2 := json.Unmarshal([]byte(s), &log); err2 != nil {
			t.Fatalf("net log: %v", err)
		}
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("net log: no URL_REQUEST_START_JOB event type")
	}
	for _, e := range log.Events {
		if e.Type == start && e.Params.URL != "" && e.Params.Initiator != "not an origin" {
			requests = append(requests, e.Params.URL)
		}
	}
	return string(out), console, requests
}

// TestStatsHTMLInChromium: the page `savepoint stats --html` writes is opened in real headless
// Chromium (Debian's package): it renders every chart the page holds (its SVG elements and bars
// are in the DOM Chromium built), logs nothing to the console and requests nothing. A control
// page (the same without its Content-Security-Policy, plus an image on loopback and a failing
// script) shows that the console and request checks do see such things.
func TestStatsHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("STATECRAFT_ORACLE") != "" {
			t.Fatalf("chromium is missing (.ci/run installs Debian's chromium): %v", err)
		}
		t.Skipf("chromium is missing (apt-get install chromium; .ci/run installs it): %v", err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "stats.html")
	code, out, errOut := runCLI("savepoint", "stats", "--top", "3", "--at", "2026-11-30T05:00:00Z", "--html", page, "../../testdata/savepoints/keyed-ttl-collections")
	if code != 0 || !strings.Contains(out, "wrote "+page) {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	charts, bars := strings.Count(html, "<svg class=\"chart\""), strings.Count(html, "<rect ")
	// Key groups and subtasks of the operator, and the TTL ages of its two TTL states.
	if charts != 4 || bars == 0 || !strings.Contains(html, "TTL recent") || !strings.Contains(html, "top keys of attrs") {
		t.Fatalf("page has %d charts, %d bars:\n%s", charts, bars, html)
	}
	dom, console, requests := chromiumLoad(t, bin, page)
	if n := strings.Count(dom, "<svg class=\"chart\""); n != charts {
		t.Errorf("Chromium rendered %d charts, the page has %d", n, charts)
	}
	if n := strings.Count(dom, "<rect "); n != bars {
		t.Errorf("Chromium rendered %d bars, the page has %d", n, bars)
	}
	if len(console) > 0 {
		t.Errorf("console messages: %q", console)
	}
	if len(requests) > 0 {
		t.Errorf("the page requested %q", requests)
	}

	control := filepath.Join(dir, "control.html")
	c := strings.Replace(html, `<meta http-equiv="Content-Security-Policy"`, `<meta name="x"`, 1)
	c = strings.Replace(c, "<h1>", `<img src="http://127.0.0.1:9/x.png"><script>undefinedFunction()</script><h1>`, 1)
	if err := os.WriteFile(control, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	_, console, requests = chromiumLoad(t, bin, control)
	if len(console) == 0 || len(requests) != 1 || requests[0] != "http://127.0.0.1:9/x.png" {
		t.Errorf("control page: console %q, requests %q; the checks above would not see an error or a request", console, requests)
	}
}
