package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

var versionCmd = &command{
	name:    "version",
	summary: "print mwmm's version, the Go version that built it and its commit",
	usage:   "mwmm version [--json]",
	help: `
Version prints the module's version (v1.2.3 when installed with go install
…@v1.2.3, "(devel)" when built from a checkout), the Go version that built
the binary and, when it was built in a git checkout, the commit, its time
and whether the tree had uncommitted changes. Quote it in bug reports.`,
	examples: `
mwmm version
mwmm version --json`,
	brief: `
Output:
  json  print the version as JSON
`,
	flags: func() *flag.FlagSet { fs, _ := versionFlags(); return fs },
	run:   runVersion,
}

func versionFlags() (*flag.FlagSet, *bool) {
	fs := newFlagSet("version")
	return fs, fs.Bool("json", false, "print the version as JSON")
}

// buildVersion is what 'mwmm version' prints.
type buildVersion struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

func readVersion() (buildVersion, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{}, fmt.Errorf("this binary carries no build information (built without module support)")
	}
	v := buildVersion{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Module == "" { // a test binary: the module is not the main one
		v.Module = "github.com/mwmm/mwmm"
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v, nil
}

func runVersion(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, asJSON := versionFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("version takes no arguments, got %q", rest[0])
	}
	v, err := readVersion()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, v)
	}
	fmt.Fprintf(stdout, "mwmm %s (%s), built with %s\n", v.Version, v.Module, v.Go)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = ", with uncommitted changes"
		}
		fmt.Fprintf(stdout, "commit %s (%s%s)\n", v.Revision, v.Time, mod)
	}
	return nil
}
