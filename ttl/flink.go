// Package ttl reads and writes state time-to-live values the way Apache Flink does.
//
// Two parsers, on purpose:
//
//   - ParseFlink is Flink's own duration grammar (org.apache.flink.util.TimeUtils.parseDuration
//     in Flink 2.3.0): it decides what a compiled plan's "ttl" text means, and it must accept
//     exactly what Flink accepts and reject exactly what Flink rejects, so that statecraft never
//     calls a plan valid that Flink would refuse to load. It is checked row by row against the
//     oracle's table testdata/durations/flink-2.3.0.tsv.
//   - ParseInput is for people typing on the command line: everything ParseFlink takes, plus
//     Go-style compound durations ("90m", "1h30m", "2d12h") and "never".
//
// There is one writer, Format: Flink's formatWithHighestUnit rule (the largest of ns, µs, ms, s,
// min, h, d that divides the value exactly, then "<n> <label>"; zero is "0 ms"). It is the
// text Flink 1.18.1+ writes itself when it compiles a plan, and every Flink version parses it.
//
// A TTL is a whole number of milliseconds, the unit Flink's state backends apply. Zero means
// the state never expires, and therefore compares as larger than every finite TTL.
package ttl

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode"
)

// Duration is a non-negative span as Flink's parser produces it: java.time.Duration's range
// (seconds up to 2^63-1 plus nanoseconds), which is far wider than Go's time.Duration.
type Duration struct {
	Sec  int64 // whole seconds, >= 0
	Nano int32 // 0..999,999,999
}

// Millis converts like java.time.Duration.toMillis: sub-millisecond digits are dropped, and a
// value whose milliseconds do not fit in a signed 64-bit integer is an error (Flink throws
// ArithmeticException when it turns such a plan TTL into a StateTtlConfig).
func (d Duration) Millis() (int64, error) {
	if d.Sec > math.MaxInt64/1000 {
		return 0, fmt.Errorf("%d s does not fit in 64-bit milliseconds", d.Sec)
	}
	ms := d.Sec * 1000
	extra := int64(d.Nano / 1e6)
	if ms > math.MaxInt64-extra {
		return 0, fmt.Errorf("%d s does not fit in 64-bit milliseconds", d.Sec)
	}
	return ms + extra, nil
}

// SubMillis reports whether d has digits below one millisecond (which Flink drops).
func (d Duration) SubMillis() bool { return d.Nano%1e6 != 0 }

// unit is one of Flink's TimeUtils.TimeUnit values. labels[0] is the label Flink writes.
type unit struct {
	nanos  int64
	labels []string
}

// units in Flink's declaration order, largest first. The labels are those of Flink 2.3.0
// (read from its flink-core jar): note "m" for minutes, and "µs" with U+00B5 MICRO SIGN
// (not "us", not Greek mu). Only the first label of each is ever written.
var units = []unit{
	{86400e9, []string{"d", "day", "days"}},
	{3600e9, []string{"h", "hour", "hours"}},
	{60e9, []string{"min", "m", "minute", "minutes"}},
	{1e9, []string{"s", "sec", "secs", "second", "seconds"}},
	{1e6, []string{"ms", "milli", "millis", "millisecond", "milliseconds"}},
	{1e3, []string{"\u00b5s", "micro", "micros", "microsecond", "microseconds"}},
	{1, []string{"ns", "nano", "nanos", "nanosecond", "nanoseconds"}},
}

var labelNanos = func() map[string]int64 {
	m := map[string]int64{}
	for _, u := range units {
		for _, l := range u.labels {
			m[l] = u.nanos
		}
	}
	return m
}()

// ErrSyntax is wrapped by every ParseFlink error, so callers can tell "Flink cannot parse
// this" from I/O problems.
var ErrSyntax = errors.New("not a duration Flink can parse")

// ParseFlink parses text exactly as Flink 2.3.0's TimeUtils.parseDuration does:
//
//	text    = trim(input)                     Java trim: strips chars <= U+0020 at both ends
//	text    = ""                              -> error (empty or whitespace only)
//	digits  = longest prefix of ASCII 0-9
//	digits  = ""                              -> ISO-8601 java.time.Duration.parse(text),
//	                                             negative results rejected
//	label   = lower(trim(rest))               no label: milliseconds
//	value   = digits * unit                   must fit java.time.Duration (seconds in int64)
func ParseFlink(text string) (Duration, error) {
	t := javaTrim(text)
	if t == "" {
		return Duration{}, fmt.Errorf("%w: %q is empty or whitespace only", ErrSyntax, text)
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		d, err := parseISO(t)
		if err != nil {
			return Duration{}, fmt.Errorf("%w: %q does not start with a number and is not an ISO-8601 duration (%v)", ErrSyntax, text, err)
		}
		return d, nil
	}
	digits := t[:i]
	label := javaLowerUS(javaTrim(t[i:]))
	per := int64(1e6) // no label: milliseconds
	if label != "" {
		n, ok := labelNanos[label]
		if !ok {
			return Duration{}, fmt.Errorf("%w: %q: unit label %q is not one of d, h, min/m, s, ms, µs, ns (or their long forms)", ErrSyntax, text, label)
		}
		per = n
	}
	// digits may be arbitrarily long (Flink uses BigInteger); the product must keep its seconds
	// within a signed 64-bit integer, as java.time.Duration does.
	v, _ := new(big.Int).SetString(digits, 10)
	v.Mul(v, big.NewInt(per))
	sec, nano := new(big.Int).QuoRem(v, big.NewInt(1e9), new(big.Int))
	if !sec.IsInt64() {
		return Duration{}, fmt.Errorf("%w: %q overflows a Java Duration", ErrSyntax, text)
	}
	return Duration{Sec: sec.Int64(), Nano: int32(nano.Int64())}, nil
}

// javaTrim is java.lang.String.trim: it strips every char <= U+0020 (control characters
// included) at both ends, and nothing else (no Unicode spaces).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaLowerUS is String.toLowerCase(Locale.US) as far as it matters for matching Flink's
// labels. The one rune where Go and Java part ways in a way that could forge a label is U+0130
// (capital I with dot): Java lowers it to "i\u0307", Go's unicode.ToLower to plain "i".
func javaLowerUS(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\u0130' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// parseISO implements java.time.Duration.parse (JDK 17), the fallback Flink 2.x uses when the
// text does not start with a digit:
//
//	[+-]P [n D] [T [n H] [n M] [n[.f] S]]      case-insensitive; n = [+-]?digits; f = 0-9 digits
//
// At least one of D/H/M/S must be present, and a T must be followed by a time part. Each part
// is converted to seconds with overflow checks; the total must not be negative (Flink's rule).
func parseISO(t string) (Duration, error) {
	s := t
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || (s[0] != 'P' && s[0] != 'p') {
		return Duration{}, errors.New("no P designator")
	}
	s = s[1:]
	type part struct {
		num      string // with optional sign
		frac     string
		has      bool
		fracSeen bool
	}
	var day, hour, min, sec part
	// number reads [+-]?[0-9]+ at the start of s.
	number := func(s string) (string, string) {
		j := 0
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return "", s
		}
		return s[:k], s[k:]
	}
	if n, rest := number(s); n != "" && rest != "" && (rest[0] == 'D' || rest[0] == 'd') {
		day = part{num: n, has: true}
		s = rest[1:]
	}
	if s != "" {
		if s[0] != 'T' && s[0] != 't' {
			return Duration{}, errors.New("unexpected text after the day part")
		}
		// JDK quirk kept on purpose: the "T without a time part" check compares with an
		// upper-case 'T' only, so "P1Dt" is one day while "P1DT" is an error.
		upperT := s[0] == 'T'
		s = s[1:]
		if n, rest := number(s); n != "" && rest != "" && (rest[0] == 'H' || rest[0] == 'h') {
			hour = part{num: n, has: true}
			s = rest[1:]
		}
		if n, rest := number(s); n != "" && rest != "" && (rest[0] == 'M' || rest[0] == 'm') {
			min = part{num: n, has: true}
			s = rest[1:]
		}
		if n, rest := number(s); n != "" {
			p := part{num: n, has: true}
			if rest != "" && (rest[0] == '.' || rest[0] == ',') {
				k := 1
				for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
					k++
				}
				if k-1 > 9 {
					return Duration{}, errors.New("more than 9 fraction digits")
				}
				p.frac, p.fracSeen, rest = rest[1:k], true, rest[k:]
			}
			if rest == "" || (rest[0] != 'S' && rest[0] != 's') {
				return Duration{}, errors.New("seconds part without S")
			}
			sec = p
			s = rest[1:]
		}
		if upperT && !hour.has && !min.has && !sec.has {
			return Duration{}, errors.New("T without a time part")
		}
	}
	if s != "" {
		return Duration{}, fmt.Errorf("unexpected %q", s)
	}
	if !day.has && !hour.has && !min.has && !sec.has {
		return Duration{}, errors.New("no D, H, M or S part")
	}
	// Seconds as a big integer, then the same int64 limits Java applies.
	toBig := func(p part, mul int64) (*big.Int, error) {
		if !p.has {
			return new(big.Int), nil
		}
		v, ok := new(big.Int).SetString(strings.TrimPrefix(p.num, "+"), 10)
		if !ok || !v.IsInt64() {
			return nil, errors.New("number out of range")
		}
		v.Mul(v, big.NewInt(mul))
		if !v.IsInt64() {
			return nil, errors.New("overflow")
		}
		return v, nil
	}
	total := new(big.Int)
	for _, x := range []struct {
		p   part
		mul int64
	}{{day, 86400}, {hour, 3600}, {min, 60}, {sec, 1}} {
		v, err := toBig(x.p, x.mul)
		if err != nil {
			return Duration{}, err
		}
		total.Add(total, v)
		if !total.IsInt64() {
			return Duration{}, errors.New("overflow")
		}
	}
	nanos := new(big.Int)
	if sec.fracSeen && sec.frac != "" {
		f := sec.frac + strings.Repeat("0", 9-len(sec.frac))
		nanos.SetString(f, 10)
		if strings.HasPrefix(sec.num, "-") {
			nanos.Neg(nanos)
		}
	}
	// total nanoseconds = total*1e9 + nanos; the seconds field must stay within int64 after
	// normalisation (Duration.ofSeconds(seconds, nanoAdjustment) uses floorDiv + addExact).
	all := new(big.Int).Mul(total, big.NewInt(1e9))
	all.Add(all, nanos)
	if neg {
		all.Neg(all)
	}
	if all.Sign() < 0 {
		return Duration{}, errors.New("negative duration is not supported")
	}
	q, r := new(big.Int).QuoRem(all, big.NewInt(1e9), new(big.Int))
	if !q.IsInt64() {
		return Duration{}, errors.New("overflow")
	}
	return Duration{Sec: q.Int64(), Nano: int32(r.Int64())}, nil
}

// Format writes d as Flink's TimeUtils.formatWithHighestUnit does: the largest unit among
// ns, µs, ms, s, min, h, d that divides d exactly, as "<count> <label>"; zero is "0 ms".
func Format(d Duration) string {
	if d.Sec == 0 && d.Nano == 0 {
		return "0 ms"
	}
	n := new(big.Int).Mul(big.NewInt(d.Sec), big.NewInt(1e9))
	n.Add(n, big.NewInt(int64(d.Nano)))
	r := new(big.Int)
	for _, u := range units { // largest first: the first exact divisor is the highest one
		q, rem := new(big.Int).QuoRem(n, big.NewInt(u.nanos), r)
		if rem.Sign() == 0 {
			return q.String() + " " + u.labels[0]
		}
	}
	return n.String() + " ns" // unreachable: 1 ns divides everything
}

// FormatMillis is Format for a whole number of milliseconds (ms >= 0), without big integers.
func FormatMillis(ms int64) string {
	if ms <= 0 {
		return "0 ms"
	}
	switch {
	case ms%86400000 == 0:
		return fmt.Sprintf("%d d", ms/86400000)
	case ms%3600000 == 0:
		return fmt.Sprintf("%d h", ms/3600000)
	case ms%60000 == 0:
		return fmt.Sprintf("%d min", ms/60000)
	case ms%1000 == 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}
