// Package outfile writes the command line's output files so that a failed
// or interrupted run never leaves a truncated file where a good one was.
//
// A regular file (or a new one) is written to a hidden temporary file in
// its folder and renamed over the path once complete: until then the
// earlier file stays whole, and a failure removes the temporary file. (It
// is not synced to the disk: that guards against power cuts, not failed
// runs, at the price of a second pass over the bytes.)
// A special file (a FIFO, a terminal, /dev/null, /dev/stdout) is written in
// place: renaming over it would replace the device node with a regular
// file. The path "-" is standard output. [Check] says before any work
// whether a path can be written.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stdout is the path that names standard output.
const Stdout = "-"

// IsStdout says whether path names standard output: "-", or /dev/stdout
// (a link to /proc/self/fd/1, which a rename would miss and a second
// opening of a redirected file would overwrite from its start).
func IsStdout(path string) bool {
	return path == Stdout || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1"
}

// Check reports why path cannot be written as an output, before the work
// that would fill it: its folder is missing, not a folder or not writable,
// or path is a folder. "-" and existing special files pass.
func Check(path string) error {
	if IsStdout(path) {
		return nil
	}
	if path == "" {
		return errors.New("an empty file name")
	}
	target, st, err := resolve(path)
	switch {
	case err != nil && !isDir(filepath.Dir(path)):
		return fmt.Errorf("%s: no folder %s to write it into", path, filepath.Dir(path))
	case err != nil:
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	case st != nil && st.IsDir():
		return fmt.Errorf("%s is a folder: name a file in it", path)
	case st != nil && inPlace(path, st):
		return nil // its own permissions decide at open
	}
	dir := filepath.Dir(target)
	if !isDir(dir) {
		return fmt.Errorf("%s: no folder %s to write it into", path, dir)
	}
	// Creating a file is the one test of writability that sees ACLs and
	// read-only mounts alike.
	f, err := createTemp(dir, ".mwmm-check")
	if err != nil {
		return fmt.Errorf("%s: cannot write into %s: %w", path, dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// resolve follows symbolic links to the file that path names, so that a
// rename replaces the file and not the link. st is nil when it does not
// exist yet.
func resolve(path string) (target string, st fs.FileInfo, err error) {
	st, err = os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A dangling link is written through too: name its target.
		if t, lerr := os.Readlink(path); lerr == nil {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(path), t)
			}
			return t, nil, nil
		}
		return path, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if inPlace(path, st) { // its links may lead nowhere (pipe:[1234])
		return path, st, nil
	}
	if target, err = filepath.EvalSymlinks(path); err != nil {
		return "", nil, err
	}
	return target, st, nil
}

// inPlace says whether path is written where it is, never renamed over: a
// special file, or any file under /dev or /proc.
func inPlace(path string, st fs.FileInfo) bool {
	if !st.Mode().IsRegular() {
		return true
	}
	abs, err := filepath.Abs(path)
	return err == nil && (strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/"))
}

// createTemp creates a new file BASE.NNNN.partial in dir with mode 0666
// less the umask, as os.Create does (os.CreateTemp would give 0600).
func createTemp(dir, base string) (*os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".partial")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 100 {
			return f, err
		}
	}
}

// unwrapPath drops the paths of a *fs.PathError or *os.LinkError, so that
// messages name the output the user gave and not a temporary file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
