package uid

import (
	"bufio"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFlinkTable checks Hash and OperatorID against every row Flink 2.3.0 computed: the oracle
// command uid-hashes (testdata/oracle, OperatorIdentifier.forUid(uid).getOperatorId(), checked
// equal to OperatorIDGenerator.fromUid) read testdata/uids/inputs.txt and wrote
// testdata/uids/flink-2.3.0.tsv, one line per UID:
//
//	escaped-uid <TAB> 32 hex digits
//
// where \t, \n, \r, \0 and \\ stand for TAB, LF, CR, NUL and a backslash (any other backslash is
// itself). The inputs cover every murmur3 tail length, multi-byte runs across 16-byte blocks,
// non-ASCII, emoji, NUL, whitespace and UIDs of 10 000 characters.
func TestFlinkTable(t *testing.T) {
	const table = "../../testdata/uids/flink-2.3.0.tsv"
	inputs, err := os.ReadFile("../../testdata/uids/inputs.txt")
	if os.IsNotExist(err) {
		t.Skip("no testdata/uids/inputs.txt (made by the oracle command uid-hashes)")
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(table)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	// The table must be Flink's answer to exactly these inputs, in order: a row lost or an
	// input added without rerunning the oracle would otherwise pass unnoticed.
	var want []string
	for _, l := range strings.Split(strings.TrimSuffix(string(inputs), "\n"), "\n") {
		if l != "" {
			want = append(want, l)
		}
	}

	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	n, long, nonASCII := 0, 0, 0
	for sc.Scan() {
		line := sc.Text()
		escaped, hash, ok := strings.Cut(line, "\t")
		if !ok || len(hash) != 32 {
			t.Fatalf("%s:%d: want escaped-uid TAB 32 hex digits, got %.60q", table, n+1, line)
		}
		if n >= len(want) || escaped != want[n] {
			t.Fatalf("%s:%d: uid %.40q is not line %d of inputs.txt", table, n+1, escaped, n+1)
		}
		n++
		u := unescape(escaped)
		if !utf8.ValidString(u) {
			t.Fatalf("%s:%d: uid is not valid UTF-8", table, n)
		}
		if len(u) >= 10000 {
			long++
		}
		if strings.IndexFunc(u, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
			nonASCII++
		}
		if got := Hash(u); got != hash {
			t.Errorf("%s:%d: Hash(%.40q) (%d bytes) = %s, Flink says %s", table, n, u, len(u), got, hash)
		}
		id := OperatorID(u)
		if got := hex.EncodeToString(id[:]); got != hash {
			t.Errorf("%s:%d: OperatorID(%.40q) = %s, Flink says %s", table, n, u, got, hash)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	if n != len(want) {
		t.Fatalf("%s has %d rows, inputs.txt %d UIDs", table, n, len(want))
	}
	if long < 3 || nonASCII < 10 {
		t.Fatalf("%s: only %d UIDs of 10 000+ bytes and %d non-ASCII ones; the inputs lost their hard cases", table, long, nonASCII)
	}
	t.Logf("%d UIDs (%d non-ASCII, %d of 10 000+ bytes) agree with Flink 2.3.0", n, nonASCII, long)
}

// unescapes maps the letter after a backslash in the oracle's escaping to the byte it stands for.
var unescapes = map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r', '0': 0, '\\': '\\'}

// unescape undoes the oracle's escaping: \t \n \r \0 \\ are TAB, LF, CR, NUL and a backslash; a
// backslash before anything else stays as it is.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			if v, ok := unescapes[s[i+1]]; ok {
				b.WriteByte(v)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
