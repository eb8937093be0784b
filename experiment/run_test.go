package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeOld(t *testing.T, dir string) map[string]string {
	t.Helper()
	old := map[string]string{"synthetic.csv": "p,s,n,err\nold,old,1,1\n", "synthetic.png": "old png", "synthetic.svg": "old svg"}
	for name, body := range old {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return old
}

func checkOld(t *testing.T, dir string, old map[string]string) {
	t.Helper()
	for name, body := range old {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != body {
			t.Errorf("%s is %q (%v), want the earlier %q", name, b, err, body)
		}
	}
}

// Issue 28, defect 1: a run that fails before its first row, or is refused,
// replaces nothing and leaves no file behind.
func TestFailedRunKeepsResults(t *testing.T) {
	dir := t.TempDir()
	old := writeOld(t, dir)
	e := synthetic(func(int, context.Context) ([]Row, error) { return nil, errors.New("engine broke") }, 4)
	if _, err := Run(context.Background(), e, Config{Workers: 1}, dir, nil); err == nil {
		t.Fatal("no error from a failing run")
	}
	checkOld(t, dir, old)
	e.Engines = "model"
	_, err := Run(context.Background(), e, Config{Engine: "reference"}, dir, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("engine refused with %v, want a *ConfigError", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(old) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want only the 3 earlier files", names)
	}
	checkOld(t, dir, old)
}

// Issue 28, defect 1: an interrupted run beside earlier results writes its
// rows to NAME.partial.csv and leaves the results alone.
func TestInterruptBesideResults(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := synthetic(func(i int, ctx context.Context) ([]Row, error) {
		if i < 2 {
			return []Row{{Panel: "p", Series: "s", X: float64(i + 1), Y: 1}}, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}, 6)
	dir := t.TempDir()
	old := writeOld(t, dir)
	res, err := Run(ctx, e, Config{Workers: 1}, dir, nil)
	if !errors.Is(err, context.Canceled) || res.Done != 2 {
		t.Fatalf("err %v, %d done", err, res.Done)
	}
	checkOld(t, dir, old)
	b, err := os.ReadFile(filepath.Join(dir, "synthetic.partial.csv"))
	if err != nil || string(b) != "p,s,n,err\np,s,1,1\np,s,2,1\n" {
		t.Errorf("partial CSV %q (%v)", b, err)
	}
	if len(res.Files) != 1 || !strings.HasSuffix(res.Files[0], "synthetic.partial.csv") {
		t.Errorf("files %v, want the partial CSV only", res.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, "synthetic.csv.partial")); !os.IsNotExist(err) {
		t.Errorf("the streaming file is left behind: %v", err)
	}
}

// Issue 28, defect 9: the CSV gets the plots' mode (0644 less the umask),
// not os.CreateTemp's 0600.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	e := synthetic(func(i int, ctx context.Context) ([]Row, error) {
		return []Row{{Panel: "p", Series: "s", X: float64(i + 1), Y: 1}}, nil
	}, 3)
	res, err := Run(context.Background(), e, Config{Workers: 1}, dir, nil)
	if err != nil || len(res.Files) != 3 {
		t.Fatalf("%v, files %v", err, res.Files)
	}
	for _, f := range res.Files {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v (%v), want 0644", f, st.Mode().Perm(), err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d files in the folder, want the CSV and two plots (no temporary files)", len(ents))
	}
}

// CheckEngine's three kinds.
func TestCheckEngine(t *testing.T) {
	for _, c := range []struct {
		kind, engine string
		ok           bool
	}{
		{"", "", true}, {"", "reference", false}, {"any", "reference", true}, {"any", "model:a100", true},
		{"any", "model:nosuch", false}, {"any", "warp", false}, {"model", "reference", false}, {"model", "model:v100", true},
	} {
		err := CheckEngine(&Experiment{Name: "x", Engines: c.kind}, c.engine)
		if (err == nil) != c.ok {
			t.Errorf("kind %q, engine %q: %v, want ok %v", c.kind, c.engine, err, c.ok)
		}
	}
}
