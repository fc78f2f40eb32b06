package main

import (
	"encoding/json"
	"io"
)

// encodeJSON prints v as every --json output is printed: indented two spaces, without HTML
// escaping (plan descriptions are full of < and >).
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
