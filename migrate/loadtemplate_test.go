package migrate

import (
	"bytes"
	"testing"
)

// TestIntAt: intAt takes exactly the integer tokens numberEnd takes that have no fraction or
// exponent, and reads the value of those of at most 18 digits.
func TestIntAt(t *testing.T) {
	for _, tc := range []struct {
		in    string
		end   int
		n     int64
		small bool
	}{
		{"0,", 1, 0, true},
		{"-0}", 2, 0, true},
		{"510934,", 6, 510934, true},
		{"-42 ", 3, -42, true},
		{"999999999999999999}", 18, 999999999999999999, true},
		{"-999999999999999999}", 19, -999999999999999999, true},
		{"1000000000000000000}", 19, 0, false},   // 19 digits: the token, not the value
		{"123456789012345678901,", 21, 0, false}, // past int64: the encoder decides
		{"-", -1, 0, false},                      // no digits
		{"-x", -1, 0, false},                     //
		{"01", -1, 0, false},                     // a leading zero
		{"1.5", -1, 0, false},                    // a fraction: scanFlat's
		{"1e3", -1, 0, false},                    // an exponent
		{"2E-1", -1, 0, false},                   //
		{"7", 1, 7, true},                        // at the end of the line
	} {
		end, n, small := intAt([]byte(tc.in), 0)
		if end != tc.end || n != tc.n || small != tc.small {
			t.Errorf("intAt(%q) = %d, %d, %v; want %d, %d, %v", tc.in, end, n, small, tc.end, tc.n, tc.small)
		}
		if tc.end >= 0 {
			if ne, ok := numberEnd([]byte(tc.in), 0); !ok || ne != tc.end {
				t.Errorf("numberEnd(%q) = %d, %v; intAt took %d", tc.in, ne, ok, tc.end)
			}
		}
	}
}

// TestLineTemplate: a template learnt from a line reads the lines of its shape into the tokens
// scanFlat gives, and refuses lines of another shape.
func TestLineTemplate(t *testing.T) {
	learnt := `{"operator":"uid:a","state":"s","keyGroup":0,"key":7,"namespace":null,"userKey":"u","value":9}` + "\n"
	var r rawLine
	if !scanFlat([]byte(learnt), &r, nil) {
		t.Fatal("scanFlat refused the learnt line")
	}
	var tp lineTemplate
	if !tp.learn([]byte(learnt), &r) {
		t.Fatal("learn refused the line")
	}
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":-12,"namespace":null,"userKey":"v w","value":1.5}`, true},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":"x","userKey":null,"value":true}  ` + "\r\n", true},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12345678901234567890,"namespace":null,"userKey":"","value":-0}`, true},
		{`{"operator":"uid:b","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":9}`, false}, // another operator
		{`{"operator":"uid:a","state":"t","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":9}`, false}, // another state
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":9,"x":1}`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":[9]}`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":012,"namespace":null,"userKey":"u","value":9}`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"\u00e9","value":9}`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":9} x`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3,"key":12,"namespace":null,"userKey":"u","value":9`, false},
		{`{"operator":"uid:a","state":"s","keyGroup":3, "key":12,"namespace":null,"userKey":"u","value":9}`, false}, // other spacing
	} {
		var got, want rawLine
		ok := tp.match([]byte(tc.line), &got)
		if ok != tc.ok {
			t.Errorf("match(%s) = %v, want %v", tc.line, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if !scanFlat([]byte(tc.line), &want, nil) {
			t.Fatalf("%s: matched, but scanFlat refuses it", tc.line)
		}
		got.rec.Int, got.rec.Ints = [5]int64{}, 0 // the integers read are the template's extra
		if got.String() != want.String() {
			t.Errorf("%s: template %s, scanFlat %s", tc.line, got.String(), want.String())
		}
	}
}

// TestHasAt: hasAt, which compares runs by words, agrees with bytes.Equal for runs of every
// length with a difference at every place, at every offset, and past the end of the line.
func TestHasAt(t *testing.T) {
	line := []byte(`{"operator":"uid:bench-keyed","state":"count","keyGroup":0,"key":510934,"namespace":null}`)
	for n := 0; n <= 64; n++ {
		for i := 0; i+n <= len(line)+1; i++ {
			if i+n > len(line) {
				if hasAt(line, i, make([]byte, n)) {
					t.Fatalf("hasAt(line, %d, %d bytes) past the end", i, n)
				}
				continue
			}
			lit := bytes.Clone(line[i : i+n])
			if !hasAt(line, i, lit) {
				t.Fatalf("hasAt(line, %d, %q) = false", i, lit)
			}
			for k := range n {
				lit[k] ^= 0x20
				if hasAt(line, i, lit) {
					t.Fatalf("hasAt(line, %d, %q) = true with byte %d changed", i, lit, k)
				}
				lit[k] ^= 0x20
			}
		}
	}
}
