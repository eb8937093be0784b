package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mwmm/mwmm/internal/npy"
	"github.com/mwmm/mwmm/internal/outfile"
)

// output is a file a command writes, named by its flag (--out, --x, …).
type output struct{ flag, path string }

// checkOutputs checks the files a command will write before its work, so
// that a path that cannot be written fails at once (exit 1), not after
// minutes of work. Two outputs to one path, or both to stdout ("-"), are a
// bad command line (exit 2).
func checkOutputs(outs ...output) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if f, ok := seen[o.path]; ok && outfile.IsStdout(o.path) {
			return usagef("--%s - and --%s -: one output can go to stdout", f, o.flag)
		} else if ok {
			return usagef("--%s and --%s both write %s", f, o.flag, o.path)
		}
		seen[o.path] = o.flag
		if err := outfile.Check(o.path); err != nil {
			return fmt.Errorf("--%s %w", o.flag, err)
		}
	}
	return nil
}

// reportTo is where a command prints its report: stderr when one of its
// outputs is stdout, which then holds that output alone.
func reportTo(stdout, stderr io.Writer, outs ...output) io.Writer {
	for _, o := range outs {
		if outfile.IsStdout(o.path) {
			return stderr
		}
	}
	return stdout
}

// writeArray writes data as a C-order .npy array of the shape and dtype
// through outfile: whole or not at all. stdout is the file "-".
func writeArray(ctx context.Context, path string, stdout io.Writer, dtype string, shape []int, data []float64) error {
	return outfile.WriteFile(ctx, path, stdout, func(w io.Writer) error {
		nw, err := npy.NewWriter(w, dtype, shape, false)
		if err != nil {
			return err
		}
		// A million values a call bounds the float32 copy npy makes.
		for len(data) > 0 {
			k := min(len(data), 1<<20)
			if err := nw.Write(data[:k]); err != nil {
				return err
			}
			data = data[k:]
		}
		return nw.Close()
	})
}
