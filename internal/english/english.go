// Package english spells counts and articles in messages, so that statecraft never says
// "1 errors" or "a aggregating state".
package english

import (
	"strconv"
	"strings"
)

// Count is n followed by noun, plural unless n is 1: Count(1, "error") is "1 error",
// Count(2, "state entry") "2 state entries". The plural is regular (Plural).
func Count(n int, noun string) string { return strconv.Itoa(n) + " " + Noun(n, noun) }

// Noun is noun, or its plural unless n is 1.
func Noun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return Plural(noun)
}

// Plural forms the regular English plural of noun (of its last word): entry -> entries,
// key -> keys, state file -> state files.
func Plural(noun string) string {
	if n := len(noun); n >= 2 && noun[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[n-2])) {
		return noun[:n-1] + "ies"
	}
	if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "x") || strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "ch") {
		return noun + "es"
	}
	return noun + "s"
}

// A is word with its indefinite article, by spelling: "an aggregating", "a value". (Words
// whose sound differs from their spelling, such as "unique", do not occur in statecraft's
// messages.)
func A(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
