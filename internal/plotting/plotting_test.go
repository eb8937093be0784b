package plotting

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// sizes returns n = 2^9 .. 2^20, the matrix sizes of the papers' figures.
func sizes() []float64 {
	var n []float64
	for k := 9; k <= 20; k++ {
		n = append(n, math.Ldexp(1, k))
	}
	return n
}

// errorsFrom returns errors rising log-linearly from lo to hi over len(n) points.
func errorsFrom(n []float64, lo, hi float64) []float64 {
	y := make([]float64, len(n))
	for i := range y {
		f := float64(i) / float64(len(n)-1)
		y[i] = lo * math.Pow(hi/lo, f)
	}
	return y
}

// typical is two panels of errors 1e-8..1e-3 against n = 2^9..2^20.
func typical() Figure {
	n := sizes()
	panel := func(title string, scale float64) Panel {
		return Panel{Title: title, Series: []Series{
			{Name: "fp32 cast", X: n, Y: errorsFrom(n, 1e-6*scale, 1e-3*scale)},
			{Name: "3-word split", X: n, Y: errorsFrom(n, 1e-8*scale, 1e-7*scale)},
			{Name: "bound A & B", X: n, Y: errorsFrom(n, 1e-5*scale, 1e-3), Dashed: true},
		}}
	}
	return Figure{
		Title:  "Componentwise error of C = AB",
		XLabel: "n", YLabel: "max relative error",
		LogX: true, LogY: true,
		Panels: []Panel{panel("round toward zero", 1), panel("round to nearest", 0.5)},
	}
}

func withZeros() Figure {
	fig := typical()
	y := slices.Clone(fig.Panels[1].Series[1].Y)
	y[0], y[3] = 0, -1e-9 // exact product, and a negative that log axes cannot show
	fig.Panels[1].Series[1].Y = y
	return fig
}

func allZero() Figure {
	n := sizes()
	return Figure{
		XLabel: "n", YLabel: "error", LogX: true, LogY: true,
		Panels: []Panel{
			{Title: "a", Series: []Series{{Name: "exact", X: n, Y: make([]float64, len(n))}}},
			{Title: "b", Series: []Series{{Name: "exact", X: n, Y: make([]float64, len(n))}}},
		},
	}
}

func withNonFinite() Figure {
	n := slices.Clone(sizes())
	y := errorsFrom(n, 1e-8, 1e-3)
	y[1], y[4], y[7] = math.NaN(), math.Inf(1), math.Inf(-1)
	n[9] = math.NaN()
	n[10] = 0 // X ≤ 0 on a log X axis
	n[11] = math.Inf(1)
	return Figure{
		XLabel: "n", YLabel: "error", LogX: true, LogY: true,
		Panels: []Panel{{Series: []Series{{Name: "noisy", X: n, Y: y}}}},
	}
}

// extremes spans the whole float64 range, subnormals included.
func extremes() Figure {
	return Figure{
		XLabel: "x", YLabel: "y", LogX: true, LogY: true,
		Panels: []Panel{{Series: []Series{{
			Name: "extreme",
			X:    []float64{5e-324, 1e-300, 1, 1e300, math.MaxFloat64},
			Y:    []float64{math.MaxFloat64, 5e-324, 0, 1e-310, 1e308},
		}}}},
	}
}

func withEmpty() Figure {
	n := sizes()
	return Figure{
		XLabel: "n", YLabel: "error", LogX: true, LogY: true,
		Panels: []Panel{
			{Title: "has data", Series: []Series{{Name: "data", X: n, Y: errorsFrom(n, 1e-8, 1e-3)}, {Name: "not run"}}},
			{Title: "nothing", Series: []Series{{Name: "not run"}}},
		},
	}
}

func singlePoint() Figure {
	return Figure{
		XLabel: "n", YLabel: "error", LogX: true, LogY: true,
		Panels: []Panel{{Series: []Series{{Name: "one", X: []float64{1024}, Y: []float64{3e-7}}}}},
	}
}

// svgTexts parses an SVG (failing the test if it is not well-formed XML) and
// returns the content of each <text> element.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	var texts []string
	d := xml.NewDecoder(bytes.NewReader(b))
	in := false
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "text" {
				in = true
				cur.Reset()
			}
		case xml.CharData:
			if in {
				cur.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				in = false
				texts = append(texts, cur.String())
			}
		}
	}
	return texts
}

// saveAll saves fig as PNG, SVG and PDF and checks each file; it returns the
// SVG's text elements.
func saveAll(t *testing.T, fig Figure) []string {
	t.Helper()
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg", ".pdf"} {
		if err := Save(fig, filepath.Join(dir, "fig"+ext)); err != nil {
			t.Fatalf("Save %s: %v", ext, err)
		}
	}

	f, err := os.Open(filepath.Join(dir, "fig.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	lay, err := Inspect(fig)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lay.Problems() {
		t.Error(p)
	}
	dpi := float64(pngDPI)
	wantW := int(math.Round(float64(lay.Width/vg.Inch) * dpi))
	wantH := int(math.Round(3.8 * dpi))
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("PNG is %d×%d px, want %d×%d (%.2fin × 3.8in at %d dpi)",
			b.Dx(), b.Dy(), wantW, wantH, float64(lay.Width/vg.Inch), pngDPI)
	}
	if min := float64(len(fig.Panels)) * 4.5; float64(lay.Width/vg.Inch) < min {
		t.Errorf("canvas %.2fin wide, want at least %d panels × 4.5in", float64(lay.Width/vg.Inch), len(fig.Panels))
	}

	pdf, err := os.ReadFile(filepath.Join(dir, "fig.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("PDF starts with %q, want %%PDF", pdf[:min(len(pdf), 8)])
	}

	svg, err := os.ReadFile(filepath.Join(dir, "fig.svg"))
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg)
	for _, p := range fig.Panels {
		for _, s := range p.Series {
			if s.Name != "" && !slices.Contains(texts, s.Name) {
				t.Errorf("legend text %q missing from SVG texts %q", s.Name, texts)
			}
		}
		if p.Title != "" && !strings.Contains(strings.Join(texts, " "), p.Title) {
			t.Errorf("panel title %q missing from SVG", p.Title)
		}
	}
	// A long title is wrapped into lines, each its own text.
	if fig.Title != "" && !strings.Contains(strings.Join(texts, " "), fig.Title) {
		t.Errorf("figure title %q missing from SVG", fig.Title)
	}
	return texts
}

func hasFloorNote(texts []string) bool {
	for _, s := range texts {
		if strings.Contains(s, floorNote) {
			return true
		}
	}
	return false
}

func TestSave(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fig     Figure
		floored bool // some drawn Y ≤ 0 on the log Y axis
	}{
		{"typical", typical(), false},
		{"zeros", withZeros(), true},
		{"all zero", allZero(), true},
		{"NaN and Inf", withNonFinite(), false},
		{"empty series", withEmpty(), false},
		{"single point", singlePoint(), false},
		{"extremes", extremes(), true},
		{"linear axes", Figure{XLabel: "n", YLabel: "TFLOP/s", Panels: []Panel{{Series: []Series{
			{Name: "speed", X: []float64{-1, 0, 1, 2}, Y: []float64{0, -3, 5, math.NaN()}}}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			texts := saveAll(t, tc.fig)
			if got := hasFloorNote(texts); got != tc.floored {
				t.Errorf("floor note in SVG = %v, want %v", got, tc.floored)
			}
		})
	}
}

func TestTickLabelsInSVG(t *testing.T) {
	texts := saveAll(t, typical())
	// Y spans 1e-8..1e-3 whole decades; X spans 512..1048576. Each label
	// is the base 10 and its exponent, drawn apart.
	for _, want := range []string{"10", "−8", "−5", "−3", "3", "6"} {
		if !slices.Contains(texts, want) {
			t.Errorf("tick label part %q missing from SVG texts %q", want, texts)
		}
	}
	for _, bad := range []string{"1e-08", "1e+03", "10^3", "10^-8"} {
		if slices.Contains(texts, bad) {
			t.Errorf("tick label %q drawn as written, not typeset", bad)
		}
	}
}

func TestOneLegend(t *testing.T) {
	count := func(texts []string, s string) int {
		n := 0
		for _, t := range texts {
			if t == s {
				n++
			}
		}
		return n
	}
	// One legend serves the figure, whether or not the panels list the
	// same names.
	if n := count(saveAll(t, typical()), "3-word split"); n != 1 {
		t.Errorf("same names: legend entry drawn %d times, want 1", n)
	}
	if n := count(saveAll(t, withEmpty()), "not run"); n != 1 {
		t.Errorf("different names: legend entry drawn %d times, want 1", n)
	}
}

func TestFloorNoteOnlyOnLogAxis(t *testing.T) {
	fig := withZeros()
	fig.LogY = false
	if hasFloorNote(saveAll(t, fig)) {
		t.Error("floor note drawn on a linear Y axis, where zero is drawable")
	}
	// Zeros whose X cannot be drawn are not moved to the floor.
	fig = typical()
	fig.Panels[0].Series[0].Y = slices.Clone(fig.Panels[0].Series[0].Y)
	fig.Panels[0].Series[0].Y[0] = 0
	fig.Panels[0].Series[0].X = slices.Clone(fig.Panels[0].Series[0].X)
	fig.Panels[0].Series[0].X[0] = math.NaN()
	if hasFloorNote(saveAll(t, fig)) {
		t.Error("floor note for a zero at a skipped point")
	}
}

func TestFloor(t *testing.T) {
	for _, tc := range []struct {
		y    []float64
		want float64
	}{
		{[]float64{3.2e-9, 1e-3}, 1e-10},
		{[]float64{1e-9}, 1e-10}, // an exact power: one decade below
		{[]float64{9.99e-5, 0.5}, 1e-6},
		{[]float64{2, 300}, 0.1},
		{nil, 1e-17},
		{[]float64{0, 0}, 1e-17},
		{[]float64{-1, -1e-30, 0, 4e-6}, 1e-7}, // negatives ignored
		{[]float64{math.NaN(), math.Inf(1), math.Inf(-1), 5e-4}, 1e-5},
		{[]float64{math.NaN(), math.Inf(1)}, 1e-17},
		{[]float64{5e-324}, 1e-323}, // smallest subnormal: clamped, still positive
	} {
		fig := Figure{Panels: []Panel{{Series: []Series{{X: make([]float64, len(tc.y)), Y: tc.y}}}}}
		if got := Floor(fig); got != tc.want {
			t.Errorf("Floor(%v) = %g, want %g", tc.y, got, tc.want)
		}
	}
	// The minimum is over all panels.
	fig := Figure{Panels: []Panel{
		{Series: []Series{{Y: []float64{1e-3}}}},
		{Series: []Series{{Y: []float64{2e-12}}, {Y: []float64{0}}}},
	}}
	if got := Floor(fig); got != 1e-13 {
		t.Errorf("Floor over panels = %g, want 1e-13", got)
	}
}

func TestRanges(t *testing.T) {
	l, err := prepare(withZeros())
	if err != nil {
		t.Fatal(err)
	}
	// Smallest positive Y is 0.5e-8 = 5e-9, so the floor is 1e-10.
	if l.yMin != 1e-10 || l.yMin != Floor(withZeros()) {
		t.Errorf("Y axis minimum = %g, want the floor %g", l.yMin, Floor(withZeros()))
	}
	if l.yMax != 1e-3 {
		t.Errorf("Y axis maximum = %g, want 1e-3", l.yMax)
	}
	if l.xMin != 512 || l.xMax != 1<<20 {
		t.Errorf("X range = [%g, %g], want [512, 1048576]", l.xMin, l.xMax)
	}

	l, err = prepare(allZero())
	if err != nil {
		t.Fatal(err)
	}
	if l.yMin != 1e-17 || l.yMax != 1e-16 || !l.floored {
		t.Errorf("all zero: Y range [%g, %g] floored=%v, want [1e-17, 1e-16] true", l.yMin, l.yMax, l.floored)
	}

	l, err = prepare(singlePoint())
	if err != nil {
		t.Fatal(err)
	}
	if !(l.xMin < 1024 && 1024 < l.xMax && l.yMin < 3e-7 && 3e-7 < l.yMax) {
		t.Errorf("single point: range X [%g, %g] Y [%g, %g] does not hold (1024, 3e-7) inside", l.xMin, l.xMax, l.yMin, l.yMax)
	}

	l, err = prepare(withNonFinite())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(l.panels[0][0].xy); got != 12-6 {
		t.Errorf("kept %d points of 12, want 6 (3 bad Y, 3 bad X)", got)
	}
}

func TestStylesFollowNames(t *testing.T) {
	fig := Figure{Panels: []Panel{
		{Series: []Series{{Name: "a"}, {Name: "b"}}},
		{Series: []Series{{Name: "c"}, {Name: "b"}, {Name: "a"}}},
	}}
	l, err := prepare(fig)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, p := range l.panels {
		for _, s := range p {
			got[s.name] = append(got[s.name], s.style)
		}
	}
	want := map[string][]int{"a": {0, 0}, "b": {1, 1}, "c": {2}}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("styles of %q = %v, want %v", name, got[name], w)
		}
	}
	// Distinct styles look distinct: 64 of them before (colour, shape) repeats.
	seen := map[[2]int]bool{}
	for st := range len(palette) * len(glyphs) {
		k := [2]int{st % len(palette), (st + st/len(palette)) % len(glyphs)}
		if seen[k] {
			t.Fatalf("style %d repeats colour and shape %v", st, k)
		}
		seen[k] = true
	}
}

func TestLogTicks(t *testing.T) {
	labelled := func(lo, hi float64, max int) []string {
		var out []string
		for _, tk := range (logTicks{max: max}).Ticks(lo, hi) {
			if tk.Value < lo || tk.Value > hi {
				t.Errorf("Ticks(%g, %g): tick %g outside the range", lo, hi, tk.Value)
			}
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got, want := labelled(512, 1<<20, maxXLabels), []string{"10^3", "10^4", "10^5", "10^6"}; !slices.Equal(got, want) {
		t.Errorf("X 2^9..2^20 labels %q, want %q", got, want)
	}
	if got, want := labelled(1e-8, 1e-3, maxYLabels), []string{"10^-8", "10^-7", "10^-6", "10^-5", "10^-4", "10^-3"}; !slices.Equal(got, want) {
		t.Errorf("Y 1e-8..1e-3 labels %q, want %q", got, want)
	}
	// 18 decades: every 3rd, aligned on 1e+00.
	if got, want := labelled(1e-17, 1, maxYLabels), []string{"10^-15", "10^-12", "10^-9", "10^-6", "10^-3", "1"}; !slices.Equal(got, want) {
		t.Errorf("Y 1e-17..1 labels %q, want %q", got, want)
	}
	// Fewer than three decades: 1, 2 and 5 × 10^e, never neighbours as
	// close as 8000 and 10000.
	if got, want := labelled(1024, 16384, maxXLabels), []string{"2×10^3", "5×10^3", "10^4"}; !slices.Equal(got, want) {
		t.Errorf("X 2^10..2^14 labels %q, want %q", got, want)
	}
	if got, want := labelled(10, 100, maxYLabels), []string{"10^1", "20", "50", "10^2"}; !slices.Equal(got, want) {
		t.Errorf("Y 10..100 labels %q, want %q", got, want)
	}
	for _, r := range [][2]float64{{1e-300, 1e300}, {1e-323, 1e308}, {1e-17, 1e-16}, {512, 1000}, {512, 520}, {2, 3}} {
		got := labelled(r[0], r[1], maxYLabels)
		if len(got) < 2 || len(got) > maxYLabels {
			t.Errorf("Ticks(%g, %g) labels %q: want 2..%d", r[0], r[1], got, maxYLabels)
		}
	}
}

func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	err := Save(typical(), filepath.Join(dir, "fig.jpg"))
	if err == nil || !strings.Contains(err.Error(), ".png, .svg or .pdf") {
		t.Errorf("Save .jpg: error %v, want one naming .png, .svg or .pdf", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fig.jpg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Save .jpg left a file: %v", err)
	}
	if err := Save(typical(), filepath.Join(dir, "no such dir", "fig.png")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
	if err := Save(Figure{}, filepath.Join(dir, "empty.svg")); err == nil {
		t.Error("Save with no panels: no error")
	}
	bad := typical()
	bad.Panels[0].Series[0].Y = bad.Panels[0].Series[0].Y[:3]
	if err := Save(bad, filepath.Join(dir, "bad.svg")); err == nil || !strings.Contains(err.Error(), "len(X)") {
		t.Errorf("Save with len(X) != len(Y): error %v", err)
	}
}

func TestSaveDeterministic(t *testing.T) {
	dir := t.TempDir()
	var out [2][]byte
	for i := range out {
		path := filepath.Join(dir, strconv.Itoa(i)+".svg")
		if err := Save(withZeros(), path); err != nil {
			t.Fatal(err)
		}
		var err error
		if out[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two Saves of one figure wrote different SVG bytes")
	}
}

// A figure with more series than the old palette had colours, a title far
// wider than the canvas and data in every corner: the title wraps inside
// the canvas, the legend sits off the data, every series has a colour of
// its own.
func TestLayoutProblems(t *testing.T) {
	n := sizes()
	var ss []Series
	for i := range len(palette) {
		ss = append(ss, Series{Name: "FABsum-v1 b=" + strconv.Itoa(1<<i), X: n, Y: errorsFrom(n, 1e-8*float64(i+1), 1e-3/float64(i+1))})
	}
	fig := Figure{
		Title:  strings.Repeat("a long title that does not fit on one line ", 6),
		XLabel: "n", YLabel: "error", LogX: true, LogY: true,
		Panels: []Panel{{Title: "one panel", Series: ss}},
	}
	lay, err := Inspect(fig)
	if err != nil {
		t.Fatal(err)
	}
	if p := lay.Problems(); len(p) > 0 {
		t.Errorf("problems: %q", p)
	}
	if len(lay.Styles) != len(palette) {
		t.Errorf("%d styles for %d series", len(lay.Styles), len(palette))
	}
	if lay.Title.Size().Y < 2*14 {
		t.Errorf("title %v is one line high; want it wrapped", lay.Title)
	}
	// The checks fire: a legend moved onto the data, two series of one
	// colour, a title past the edge, tick labels on top of each other.
	bad := *lay
	bad.Legend = lay.Data[0]
	bad.Styles = append(slices.Clone(lay.Styles), SeriesStyle{Name: "copy", Color: lay.Styles[1].Color})
	bad.Title.Max.X = lay.Width + 1
	bad.XTicks = [][]vg.Rectangle{{lay.XTicks[0][0], lay.XTicks[0][0]}}
	got := strings.Join(bad.Problems(), "\n")
	for _, want := range []string{"covers the data", "share a colour", "title", "overlap"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems of a broken layout %q: nothing with %q", got, want)
		}
	}
}

// Two panels whose titles are each wider than a panel: each wraps within
// its own tile, and the check sees titles that run into each other.
func TestPanelTitlesWrap(t *testing.T) {
	n := sizes()
	long := "NVIDIA H100 80GB HBM3: the paper's t_avg, the mean of 10 runs, the split excluded"
	fig := Figure{
		Title: "two panels", XLabel: "n", YLabel: "Tflop/s", LogX: true, LogY: true,
		Panels: []Panel{
			{Title: long, Series: []Series{{Name: "a", X: n, Y: errorsFrom(n, 1, 10)}}},
			{Title: long, Series: []Series{{Name: "a", X: n, Y: errorsFrom(n, 2, 20)}}},
		},
	}
	lay, err := Inspect(fig)
	if err != nil {
		t.Fatal(err)
	}
	if p := lay.Problems(); len(p) > 0 {
		t.Errorf("problems: %q", p)
	}
	if len(lay.PanelTitles) != 2 || lay.PanelTitles[0].Size().Y < 2*12 {
		t.Fatalf("panel titles %v: want two, wrapped", lay.PanelTitles)
	}
	bad := *lay
	bad.PanelTitles = []vg.Rectangle{lay.PanelTitles[0], lay.PanelTitles[0]}
	if got := strings.Join(bad.Problems(), "\n"); !strings.Contains(got, "titles of panels 0 and 1 overlap") {
		t.Errorf("problems of overlapping panel titles: %q", got)
	}
}

// powText typesets "10^-6" as 10 with a smaller, raised exponent: wider
// than "10" and taller, and text without an exponent as text.Plain does.
func TestPowText(t *testing.T) {
	h := powText{text.Plain{Fonts: font.DefaultCache}}
	fnt := font.From(plot.DefaultFont, 10)
	bw, bh, _ := h.Plain.Box("10", fnt)
	w, ht, _ := h.Box("10^-6", fnt)
	if w <= bw || ht <= bh {
		t.Errorf("Box(10^-6) = %v×%v, want wider and taller than 10's %v×%v", w, ht, bw, bh)
	}
	for _, s := range []string{"1000", "a^b", "^3", "2^3.5"} {
		pw, ph, pd := h.Plain.Box(s, fnt)
		if gw, gh, gd := h.Box(s, fnt); gw != pw || gh != ph || gd != pd {
			t.Errorf("Box(%q) = %v %v %v, want Plain's %v %v %v", s, gw, gh, gd, pw, ph, pd)
		}
	}
}

// Columns lays five panels out in rows of two: three rows, the panels of a
// column one above the other, the canvas two panels wide and three high.
func TestColumns(t *testing.T) {
	n := sizes()
	var ps []Panel
	for i := range 5 {
		ps = append(ps, Panel{Title: "panel " + strconv.Itoa(i), Series: []Series{{Name: "a", X: n, Y: errorsFrom(n, 1e-8, 1e-3)}}})
	}
	fig := Figure{XLabel: "n", YLabel: "error", LogX: true, LogY: true, Panels: ps, Columns: 2}
	lay, err := Inspect(fig)
	if err != nil {
		t.Fatal(err)
	}
	if p := lay.Problems(); len(p) > 0 {
		t.Errorf("problems: %q", p)
	}
	if lay.Height != 3*panelHeight || lay.Width < 2*panelWidth || lay.Width >= 3*panelWidth {
		t.Errorf("canvas %v × %v, want 2 panels wide and 3 high", lay.Width, lay.Height)
	}
	d := lay.Data
	if d[0].Min.X != d[2].Min.X || d[2].Min.X != d[4].Min.X || !(d[0].Min.X < d[1].Min.X) {
		t.Errorf("columns not aligned: %v", d)
	}
	if !(d[4].Max.Y < d[2].Min.Y && d[2].Max.Y < d[0].Min.Y) || d[0].Min.Y != d[1].Min.Y {
		t.Errorf("rows not stacked top to bottom: %v", d)
	}
}
