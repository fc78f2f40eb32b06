package kafkaclient

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadProperties reads a file in java.util.Properties' text format, the one Kafka's client
// tools take (--command-config): "key=value", "key: value" or "key value" per logical line;
// lines whose first non-blank character is # or ! are comments; a line ending in an odd number
// of backslashes continues on the next (whose leading blanks are dropped); \t \n \r \f \uXXXX
// and \<any> escapes in keys and values. A key given twice is an error (Java keeps the last
// silently, which hides typos). name says where the text came from, for errors.
func ReadProperties(r io.Reader, name string) (map[string]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	props := map[string]string{}
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := lineNo
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) {
			line = line[:len(line)-1]
			if !sc.Scan() {
				break // Java ends the value there
			}
			lineNo++
			line += strings.TrimLeft(sc.Text(), " \t\f")
		}
		k, v, err := splitProperty(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, start, err)
		}
		if _, dup := props[k]; dup {
			return nil, fmt.Errorf("%s line %d: %s is given twice", name, start, k)
		}
		props[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return props, nil
}

// continues says whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped '=', ':' or blank (blanks around
// the separator are dropped) and unescapes both sides.
func splitProperty(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(line[:end])
	if err != nil {
		return "", "", fmt.Errorf("key: %w", err)
	}
	v, err := unescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", k, err)
	}
	return k, v, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uXXXX escape %q`, s[i-1:])
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uXXXX escape %q`, s[i-1:i+5])
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
