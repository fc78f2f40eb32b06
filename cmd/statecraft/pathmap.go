package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Every command that reads a savepoint takes --path-map OLD=NEW (repeatable): state files that
// _metadata names by an absolute path under OLD (a savepoint or checkpoint moved or copied away
// from where Flink wrote it, entropy-injected keys, an incremental checkpoint's shared
// directory) are read under NEW, in whatever store NEW names. A rule that matches no absolute
// path in _metadata is an error (savepoint.OpenWith says which).

func pathMapFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "path-map", Usage: "`OLD=NEW`: read state files that _metadata names by an absolute path under OLD from NEW instead (repeatable; NEW may be on another store, e.g. s3://old/sp=/data/sp)"}
}

// savepointOptions reads --path-map.
func savepointOptions(c *cli.Context) (savepoint.Options, error) {
	var opt savepoint.Options
	for _, s := range c.StringSlice("path-map") {
		m, err := savepoint.ParsePathMap(s)
		if err != nil {
			return opt, withCode(exitFailure, err)
		}
		opt.PathMap = append(opt.PathMap, m)
	}
	return opt, nil
}

// openSavepoint opens the savepoint at p (with --checkpoint N: chk-N of the job directory p)
// with the command line's --path-map rules.
func openSavepoint(c *cli.Context, p string) (*savepoint.Savepoint, error) {
	opt, err := savepointOptions(c)
	if err != nil {
		return nil, err
	}
	if p, err = snapshotPath(c, p); err != nil {
		return nil, err
	}
	return savepoint.OpenWith(context.Background(), p, opt)
}
