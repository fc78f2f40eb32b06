package ttl

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TTL is a state time-to-live in whole milliseconds, the unit Flink's StateTtlConfig uses.
// The zero value means "never expires" (Flink writes it as "0 ms"): it is the largest TTL,
// larger than every finite one.
type TTL int64

// Never is the TTL of state that never expires.
const Never TTL = 0

// IsNever reports whether t means "never expires".
func (t TTL) IsNever() bool { return t == 0 }

// Millis returns t in milliseconds (0 for never).
func (t TTL) Millis() int64 { return int64(t) }

// Compare orders TTLs by how long state lives: -1 if t expires sooner than u, 0 if equal,
// +1 if later. Never is the largest.
func (t TTL) Compare(u TTL) int {
	switch {
	case t == u:
		return 0
	case t.IsNever():
		return 1
	case u.IsNever():
		return -1
	case t < u:
		return -1
	}
	return 1
}

// Text is t as Flink writes it in a compiled plan (Format's rule): "0 ms", "1 h", "90 min".
func (t TTL) Text() string { return FormatMillis(int64(t)) }

// String is t for people: "never", or a compact duration such as "1d12h", "1h30m", "1.5s".
func (t TTL) String() string {
	if t.IsNever() {
		return "never"
	}
	ms := int64(t)
	var b strings.Builder
	for _, u := range []struct {
		ms    int64
		label string
	}{{86400000, "d"}, {3600000, "h"}, {60000, "m"}} {
		if ms >= u.ms {
			fmt.Fprintf(&b, "%d%s", ms/u.ms, u.label)
			ms %= u.ms
		}
	}
	switch {
	case ms == 0:
	case ms%1000 == 0:
		fmt.Fprintf(&b, "%ds", ms/1000)
	case ms >= 1000:
		s := strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
		fmt.Fprintf(&b, "%ss", strings.TrimRight(s, "0"))
	default:
		fmt.Fprintf(&b, "%dms", ms)
	}
	return b.String()
}

// FromDuration turns a parsed Flink duration into the TTL Flink applies: its milliseconds,
// sub-millisecond digits dropped (as Duration.toMillis does), and an error when the
// milliseconds overflow.
func FromDuration(d Duration) (TTL, error) {
	ms, err := d.Millis()
	if err != nil {
		return 0, err
	}
	return TTL(ms), nil
}

// ParseFlinkTTL parses a plan's "ttl" text: ParseFlink, then FromDuration.
func ParseFlinkTTL(text string) (TTL, Duration, error) {
	d, err := ParseFlink(text)
	if err != nil {
		return 0, d, err
	}
	t, err := FromDuration(d)
	if err != nil {
		return 0, d, fmt.Errorf("%w: %q: %v (Flink fails when it applies this TTL)", ErrSyntax, text, err)
	}
	return t, d, nil
}

// ParseInput parses a TTL typed by a user:
//
//	never, 0                       never expires
//	Flink text                     "1 h", "3600000 ms", "1d", "PT1H", "90 min", "5000"
//	Go-style compound              "90m", "1h30m", "2d12h", "1.5h", "500ms"
//
// A bare number is milliseconds (as in Flink). Sub-millisecond values are refused rather than
// silently truncated, because Flink would apply them as a different TTL (a TTL that
// truncates to 0 ms would even mean "never").
func ParseInput(s string) (TTL, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "never") {
		return Never, nil
	}
	var d Duration
	var err error
	if d, err = ParseFlink(t); err != nil {
		var goErr error
		if d, goErr = parseCompound(t); goErr != nil {
			return 0, fmt.Errorf("TTL %q: not a Flink duration (%v) nor a Go-style one like 90m or 1h30m (%v)", s, err, goErr)
		}
	}
	if d.SubMillis() {
		return 0, fmt.Errorf("TTL %q: Flink applies TTLs in whole milliseconds; %q has digits below 1 ms", s, Format(d))
	}
	v, err := FromDuration(d)
	if err != nil {
		return 0, fmt.Errorf("TTL %q: %w", s, err)
	}
	return v, nil
}

// goUnits are the units of the Go-style compound form: time.ParseDuration's plus "d".
var goUnits = []struct {
	label string
	nanos float64
	whole int64
}{
	{"d", 86400e9, 86400e9}, {"h", 3600e9, 3600e9}, {"ms", 1e6, 1e6}, {"m", 60e9, 60e9},
	{"s", 1e9, 1e9}, {"us", 1e3, 1e3}, {"\u00b5s", 1e3, 1e3}, {"ns", 1, 1},
}

// parseCompound reads one or more <number><unit> groups ("1h30m", "1.5h"), like
// time.ParseDuration plus days, without sign, into a Duration.
func parseCompound(s string) (Duration, error) {
	if s == "" {
		return Duration{}, errors.New("empty")
	}
	var total int64 // nanoseconds; Go style is bounded by int64 nanos (about 292 years)
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 {
			return Duration{}, fmt.Errorf("expected a number at %q", s)
		}
		num := s[:i]
		s = s[i:]
		j := 0
		for j < len(s) && !(s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		lab := s[:j]
		s = s[j:]
		var per int64
		for _, u := range goUnits {
			if u.label == lab {
				per = u.whole
			}
		}
		if per == 0 {
			return Duration{}, fmt.Errorf("unknown or missing unit %q after %s", lab, num)
		}
		var part int64
		if strings.Contains(num, ".") {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f*float64(per) >= math.MaxInt64 {
				return Duration{}, fmt.Errorf("bad number %q", num)
			}
			part = int64(math.Round(f * float64(per)))
		} else {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n > math.MaxInt64/per {
				return Duration{}, fmt.Errorf("number %q out of range", num)
			}
			part = n * per
		}
		if total > math.MaxInt64-part {
			return Duration{}, errors.New("out of range")
		}
		total += part
	}
	return Duration{Sec: total / 1e9, Nano: int32(total % 1e9)}, nil
}
