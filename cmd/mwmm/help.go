package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The help has two sizes, as git's: "mwmm CMD -h" prints a synopsis that
// fits a screen (usage, flags grouped by purpose on one line each, three
// examples), and "mwmm help CMD" the manual (what the command does, every
// flag in full, every example).

const (
	helpWidth     = 100 // columns of the -h synopsis
	manualWidth   = 80  // where the manual wraps flag texts
	nameColumn    = 24  // where -h starts a flag's text
	shortExamples = 3
	shortLines    = 40 // -h fits a screen: fewer examples when the flags need the room
)

// lineCounter counts the lines written through it.
type lineCounter struct {
	w     io.Writer
	lines int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte("\n"))
	return c.w.Write(p)
}

// A flagGroup is a titled group of flags of a command's brief.
type flagGroup struct {
	title string
	flags []briefFlag
}

// A briefFlag is one line of the synopsis: the flag's names (the first is
// its own, the others aliases) and a text short enough for one line.
type briefFlag struct {
	names []string
	text  string
}

// parseBrief reads a command's brief: a line "Title:" opens a group, and a
// line indented by two spaces, "name[,alias...] text", describes a flag.
func parseBrief(brief string) []flagGroup {
	var gs []flagGroup
	for _, line := range strings.Split(strings.Trim(brief, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, "  ") {
			gs = append(gs, flagGroup{title: strings.TrimSpace(line)})
			continue
		}
		names, text, _ := strings.Cut(strings.TrimSpace(line), " ")
		if len(gs) == 0 {
			gs = append(gs, flagGroup{title: "Flags:"})
		}
		g := &gs[len(gs)-1]
		g.flags = append(g.flags, briefFlag{strings.Split(names, ","), strings.TrimSpace(text)})
	}
	return gs
}

// flagGroups returns c's groups; flags that the brief leaves out (none,
// says TestShortHelp) go in a last group so that no flag is hidden.
func flagGroups(c *command, fs *flag.FlagSet) []flagGroup {
	gs := parseBrief(c.brief)
	seen := map[string]bool{}
	for _, g := range gs {
		for _, f := range g.flags {
			for _, n := range f.names {
				seen[n] = true
			}
		}
	}
	var other flagGroup
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] {
			_, text := flag.UnquoteUsage(f)
			other.flags = append(other.flags, briefFlag{[]string{f.Name}, text})
		}
	})
	if len(other.flags) > 0 {
		other.title = "Other flags:"
		gs = append(gs, other)
	}
	return gs
}

// flagName is "--size N": the flag's name and its value's placeholder.
func flagName(fs *flag.FlagSet, name string) string {
	s := "--" + name
	if f := fs.Lookup(name); f != nil {
		if v, _ := flag.UnquoteUsage(f); v != "" {
			s += " " + v
		}
	}
	return s
}

// aliases is ", also -b" for a flag's other names, as they are typed.
func aliases(names []string) string {
	var s string
	for _, n := range names[1:] {
		if len(n) == 1 {
			s += ", also -" + n
		} else {
			s += ", also --" + n
		}
	}
	return s
}

// withDefault appends the flag's default to text unless the text says it,
// or the default is the zero value.
func withDefault(fs *flag.FlagSet, name, text string) string {
	f := fs.Lookup(name)
	if f == nil || strings.Contains(text, "default") {
		return text
	}
	switch f.DefValue {
	case "", "false", "0":
		return text
	}
	return text + " (default " + f.DefValue + ")"
}

// writeShortHelp prints the synopsis of c: what "mwmm CMD -h" shows.
func writeShortHelp(out io.Writer, c *command) {
	w := &lineCounter{w: out}
	writeUsage(w, c.usage)
	fmt.Fprintf(w, "%s.\n", capitalize(c.summary))
	if c.flags != nil {
		fs := c.flags()
		io.WriteString(w, "\n")
		for _, g := range flagGroups(c, fs) {
			fmt.Fprintf(w, "%s\n", g.title)
			for _, f := range g.flags {
				n := "  " + flagName(fs, f.names[0])
				pad := max(nameColumn-utf8.RuneCountInString(n), 2)
				text := withDefault(fs, f.names[0], f.text+aliases(f.names))
				fmt.Fprintf(w, "%s%s%s\n", n, strings.Repeat(" ", pad), text)
			}
		}
	}
	// The examples' heading points to the manual: one line less.
	fmt.Fprintf(w, "\nExamples ('mwmm help %s' prints the manual: every flag in full, more examples):\n", c.name)
	for _, e := range firstExamples(c.examples, max(1, min(shortExamples, shortLines-w.lines))) {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// writeHelp prints a command's manual: synopsis, description, flags with
// their defaults, examples.
func writeHelp(w io.Writer, c *command) {
	writeUsage(w, c.usage)
	fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
	if c.flags != nil {
		fs := c.flags()
		for _, g := range flagGroups(c, fs) {
			fmt.Fprintf(w, "\n%s\n", g.title)
			for _, f := range g.flags {
				for _, n := range f.names {
					writeFlag(w, fs, n)
				}
			}
		}
	}
	if c.examples != "" {
		io.WriteString(w, "\nExamples:\n")
		for _, line := range strings.Split(strings.TrimSpace(c.examples), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// writeFlag prints a flag as --name VALUE, then its usage and default
// wrapped on indented lines. Flags may be written with one dash or two.
func writeFlag(w io.Writer, fs *flag.FlagSet, name string) {
	f := fs.Lookup(name)
	if f == nil {
		return
	}
	_, text := flag.UnquoteUsage(f)
	// A usage that states its default (one that depends on other flags)
	// is not followed by the flag's zero value.
	if d := f.DefValue; d != "" && d != "false" && !strings.Contains(text, "(default ") {
		text += " (default " + d + ")"
	}
	fmt.Fprintf(w, "  %s\n", flagName(fs, name))
	for _, line := range wrapLine(text, manualWidth-6) {
		fmt.Fprintf(w, "      %s\n", line)
	}
}

// writeUsage prints the synopses, one per line starting "mwmm", each
// wrapped at helpWidth with its continuation lines under its first argument.
func writeUsage(w io.Writer, usage string) {
	var synopses []string
	for _, line := range strings.Split(usage, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "mwmm ") || len(synopses) == 0 {
			synopses = append(synopses, line)
		} else {
			synopses[len(synopses)-1] += " " + line
		}
	}
	for i, line := range synopses {
		head := "Usage: "
		if i > 0 {
			head = "       "
		}
		f := strings.Fields(line)
		indent := strings.Repeat(" ", len(head)+len(strings.Join(f[:min(2, len(f))], " "))+1)
		first := wrapAt(line, helpWidth-len(head), true)[0]
		fmt.Fprintf(w, "%s%s\n", head, first)
		if rest := strings.TrimSpace(line[len(first):]); rest != "" {
			for _, l := range wrapAt(rest, helpWidth-len(indent), true) {
				fmt.Fprintf(w, "%s%s\n", indent, l)
			}
		}
	}
}

// wrapLine breaks s into lines of at most width columns at spaces.
func wrapLine(s string, width int) []string { return wrapAt(s, width, false) }

// wrapAt breaks s into lines of at most width columns at spaces; with
// brackets, at spaces outside brackets where it can (a synopsis).
func wrapAt(s string, width int, brackets bool) []string {
	var lines []string
	for utf8.RuneCountInString(s) > width {
		cut, any, depth, col := -1, -1, 0, 0
		for i, r := range s {
			if col > width {
				break
			}
			switch r {
			case '[', '(':
				depth++
			case ']', ')':
				depth--
			case ' ':
				any = i
				if depth <= 0 || !brackets {
					cut = i
				}
			}
			col++
		}
		if cut < width/4 { // a bracket spans most of the line
			cut = any
		}
		if cut <= 0 {
			break
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

// firstExamples returns the first n examples, without comment lines; an
// example continued with a backslash keeps its next line.
func firstExamples(examples string, n int) []string {
	var out []string
	cont := false
	for _, line := range strings.Split(strings.TrimSpace(examples), "\n") {
		switch t := strings.TrimSpace(line); {
		case cont:
			out = append(out, line)
		case t == "" || strings.HasPrefix(t, "#") || n == 0:
			continue
		default:
			out = append(out, t)
			n--
		}
		cont = strings.HasSuffix(line, "\\")
	}
	return out
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
