package main

import (
	"io"
	"text/tabwriter"
)

// newTable returns the tab writer every table of statecraft is printed through: columns two
// spaces apart.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }
