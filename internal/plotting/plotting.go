// Package plotting renders the figures of numerical papers: error against
// matrix size n on log-log axes, in one or more side-by-side panels, written
// as PNG, SVG or PDF through gonum.org/v1/plot.
//
// A Figure holds Panels; a Panel holds Series. Save lays the panels out in a
// row (4.5in × 3.8in each, the legend in a strip at the right) with a
// shared X range and a shared Y range, so
// that a curve in one panel can be compared by eye with the same curve in
// the next one. A series keeps its colour, marker and line style across
// panels: the style belongs to the series Name, assigned in the order the
// names first appear in the figure.
//
//	fig := plotting.Figure{
//		XLabel: "n", YLabel: "componentwise error",
//		LogX: true, LogY: true,
//		Panels: []plotting.Panel{
//			{Title: "round toward zero", Series: rz},
//			{Title: "round to nearest", Series: rn},
//		},
//	}
//	err := plotting.Save(fig, "fig3.svg")
//
// Measured errors are often exactly zero (an fp64 product that happens to be
// exact), which a log axis cannot show. Save draws such points, and negative
// ones, at Floor(fig), a power of ten one decade below the smallest positive
// error, makes that the bottom of the Y axis, and says so in the Y label.
// NaN and ±Inf points, and X ≤ 0 on a log X axis, are left out.
//
// Tick labels on log axes are powers of ten with typeset exponents, 10⁻⁶:
// the tick labels are written "10^-6" and a text handler of this package
// draws the exponent smaller and raised (the Liberation fonts lack the
// superscript digits ⁰ ⁹ and ⁻, and gonum's LaTeX handler does not typeset
// exponents). Ranges narrower than two decades label 1, 2 and 5 × 10^e, so
// that neighbouring labels do not collide.
//
// The legend lists every series of the figure once and sits to the right of
// the panels, outside the data; a title longer than the canvas is wrapped.
// No two series of a figure share a colour (up to len(palette) series).
// Inspect returns where things were drawn, for tests that check a figure
// mechanically.
package plotting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/internal/outfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one curve. X and Y have equal length.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool // e.g. an a-priori bound drawn beside measured errors
}

// Panel is one sub-plot; panels are drawn side by side and share the Y range.
type Panel struct {
	Title  string
	Series []Series
}

// Figure is what Save draws.
type Figure struct {
	Title          string // above all panels (may be empty)
	XLabel, YLabel string
	LogX, LogY     bool
	Panels         []Panel
	// Columns, when positive, lays the panels out in rows of at most
	// that many, left to right and top to bottom; 0 puts them in one row.
	Columns int
}

// grid is the figure's rows and columns of panels.
func (fig Figure) grid() (rows, cols int) {
	cols = len(fig.Panels)
	if fig.Columns > 0 && fig.Columns < cols {
		cols = fig.Columns
	}
	return (len(fig.Panels) + cols - 1) / cols, cols
}

const (
	panelWidth  = 4.5 * vg.Inch
	panelHeight = 3.8 * vg.Inch
	pngDPI      = 150

	// noDataFloor is Floor when no Y is positive: below the unit roundoff
	// of fp64 (1.1e-16), so a floored point never looks like a real error.
	noDataFloor = 1e-17
	floorNote   = "(0 drawn at axis floor)"

	// At most this many labelled ticks per axis; X gets fewer because its
	// labels sit side by side.
	maxXLabels = 6
	maxYLabels = 8

	// Exponent range of pow10: 1e-323 is the smallest positive power of ten
	// a float64 holds (subnormal), 1e308 the largest.
	minExp = -323
	maxExp = 308
)

// Okabe–Ito palette, then Paul Tol's muted colours that differ from it,
// yellow last because it is faint on white. A style's colour is unique
// within a figure of up to len(palette) series.
var palette = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
	color.NRGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	color.NRGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	color.NRGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	color.NRGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
	color.NRGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	color.NRGBA{0x00, 0x00, 0x00, 0xFF}, // black
	color.NRGBA{0x88, 0x22, 0x55, 0xFF}, // wine
	color.NRGBA{0x99, 0x99, 0x33, 0xFF}, // olive
	color.NRGBA{0x33, 0x22, 0x88, 0xFF}, // indigo
	color.NRGBA{0x66, 0x11, 0x00, 0xFF}, // brown
	color.NRGBA{0x88, 0x88, 0x88, 0xFF}, // grey
	color.NRGBA{0x44, 0xAA, 0x99, 0xFF}, // teal
	color.NRGBA{0xEE, 0x66, 0x77, 0xFF}, // rose
	color.NRGBA{0x22, 0x55, 0x22, 0xFF}, // dark green
	color.NRGBA{0xAA, 0x88, 0xDD, 0xFF}, // lavender
	color.NRGBA{0x00, 0x55, 0x66, 0xFF}, // dark teal
	color.NRGBA{0xF0, 0xE4, 0x42, 0xFF}, // yellow
}

// Shapes differ as well as colours, so the figure survives greyscale print.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.BoxGlyph{},
	draw.PyramidGlyph{},
	draw.CrossGlyph{},
	draw.RingGlyph{},
	draw.SquareGlyph{},
	draw.TriangleGlyph{},
	draw.PlusGlyph{},
}

// Save writes fig to path, whole or not at all (internal/outfile); the
// extension picks the format: .png, .svg or .pdf.
// (any other extension is an error naming the valid ones)
func Save(fig Figure, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png", ".svg", ".pdf":
	default:
		return fmt.Errorf("plotting: %s: extension %q not supported; use .png, .svg or .pdf", path, ext)
	}
	b, _, err := render(fig, ext)
	if err != nil {
		return fmt.Errorf("plotting: %s: %w", path, err)
	}
	// Rendered in memory first, then written whole or not at all.
	return outfile.WriteFile(context.Background(), path, nil, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// Floor returns the value at which Save draws zero (and negative) Y values
// on a log Y axis: one decade below the smallest positive finite Y of the
// figure, rounded down to a power of ten; 1e-17 when there is none.
// (Never below 1e-323, the smallest power of ten a float64 holds.)
func Floor(fig Figure) float64 {
	lo := math.Inf(1)
	for _, p := range fig.Panels {
		for _, s := range p.Series {
			for _, y := range s.Y {
				if y > 0 && y < lo { // NaN fails y > 0; +Inf fails y < lo
					lo = y
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		return noDataFloor
	}
	return pow10(decadeFloor(lo) - 1)
}

// pow10 returns 10^e correctly rounded (math.Pow10 may be off by an ulp for
// large |e|, which would make a decade tick miss the axis end it equals),
// with e clamped to [minExp, maxExp].
func pow10(e int) float64 {
	return pow10Table()[min(max(e, minExp), maxExp)-minExp]
}

// pow10Table is built on first use: parsing is exact but slow, and gonum asks
// for the ticks of each axis many times per figure.
var pow10Table = sync.OnceValue(func() []float64 {
	t := make([]float64, maxExp-minExp+1)
	for i := range t {
		t[i], _ = strconv.ParseFloat("1e"+strconv.Itoa(minExp+i), 64)
	}
	return t
})

// decadeFloor returns the largest e with 10^e ≤ v, for finite v > 0.
func decadeFloor(v float64) int {
	e := min(max(int(math.Floor(math.Log10(v))), minExp), maxExp)
	// Log10 can be off by an ulp near exact powers of ten.
	for e > minExp && pow10(e) > v {
		e--
	}
	for e < maxExp && pow10(e+1) <= v {
		e++
	}
	return e
}

// decadeCeil returns the smallest e with 10^e ≥ v, for finite v > 0.
func decadeCeil(v float64) int {
	e := decadeFloor(v)
	if pow10(e) < v && e < maxExp {
		e++
	}
	return e
}

// cleanSeries is a Series reduced to the points Save can draw.
type cleanSeries struct {
	name   string
	xy     plotter.XYs
	style  int
	dashed bool
}

// layout is everything Save decides before it draws.
type layout struct {
	panels [][]cleanSeries
	// floored is true when some drawn point was moved up to the floor.
	floored                bool
	xMin, xMax, yMin, yMax float64
}

// prepare cleans the data, assigns styles and computes the shared ranges.
func prepare(fig Figure) (*layout, error) {
	if len(fig.Panels) == 0 {
		return nil, errors.New("figure has no panels")
	}
	floor := Floor(fig)
	l := &layout{panels: make([][]cleanSeries, len(fig.Panels))}
	styles := map[string]int{}
	xMin, xMax := math.Inf(1), math.Inf(-1)
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for i, p := range fig.Panels {
		for j, s := range p.Series {
			if len(s.X) != len(s.Y) {
				return nil, fmt.Errorf("panel %d series %q: len(X) = %d, len(Y) = %d", i, s.Name, len(s.X), len(s.Y))
			}
			key := s.Name
			if key == "" {
				// Unnamed series match by position instead.
				key = "\x00" + strconv.Itoa(j)
			}
			st, ok := styles[key]
			if !ok {
				st = len(styles)
				styles[key] = st
			}
			cs := cleanSeries{name: s.Name, style: st, dashed: s.Dashed}
			for k, x := range s.X {
				y := s.Y[k]
				if !finite(x) || !finite(y) || (fig.LogX && x <= 0) {
					continue
				}
				if fig.LogY && y <= 0 {
					y = floor
					l.floored = true
				}
				cs.xy = append(cs.xy, plotter.XY{X: x, Y: y})
				xMin, xMax = min(xMin, x), max(xMax, x)
				yMin, yMax = min(yMin, y), max(yMax, y)
			}
			l.panels[i] = append(l.panels[i], cs)
		}
	}
	l.xMin, l.xMax = axisRange(xMin, xMax, fig.LogX, false)
	l.yMin, l.yMax = axisRange(yMin, yMax, fig.LogY, true)
	return l, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axisRange turns the data extent [lo, hi] (empty when lo > hi) into an
// axis range that gonum accepts: positive on a log axis, never of zero width.
// Log Y is widened to whole decades, which leaves headroom for the legend
// and keeps the floor, a power of ten, as the axis minimum.
func axisRange(lo, hi float64, log, decades bool) (float64, float64) {
	if lo > hi { // no data
		if log {
			return 1, 10
		}
		return 0, 1
	}
	if !log {
		if lo == hi {
			d := max(math.Abs(lo)/10, 1)
			return lo - d, hi + d
		}
		return lo, hi
	}
	if decades || lo == hi {
		lo, hi = pow10(decadeFloor(lo)), pow10(decadeCeil(hi))
		if lo >= hi {
			hi = pow10(decadeFloor(lo) + 1)
		}
	}
	return lo, hi
}

// logTicks labels powers of ten, at most max of them: every decade, or
// every 2nd, 3rd, ... decade on wide ranges, with unlabelled (minor) ticks
// at the rest, and at 2..9 × 10^e when few decades are shown. A range
// holding fewer than three powers of ten labels 1, 2 and 5 × 10^e (2..9 ×
// 10^e too, every k-th, when that still gives fewer than two labels).
// Labels are written for powText: "10^-6", "2×10^3", and 1 to 9, 20 to 90
// plainly.
type logTicks struct{ max int }

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	eLo, eHi := decadeFloor(lo), decadeCeil(hi)
	inner := decadeFloor(hi) - decadeCeil(lo) + 1 // decades inside [lo, hi]
	step := 1
	for countMultiples(decadeCeil(lo), decadeFloor(hi), step) > t.max {
		step++
	}
	fine := eHi-eLo <= 6 // few enough decades to show 2..9 × 10^e
	type mant struct{ m, e int }
	var ticks []plot.Tick
	var ms []mant
	for e := eLo; e <= eHi; e++ {
		for m := 1; m <= 9; m++ {
			if m > 1 && !fine {
				break
			}
			v := pow10(e)
			if m > 1 {
				v, _ = strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(e), 64)
			}
			if v < lo || v > hi {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 && e%step == 0 {
				tk.Label = powLabel(1, e)
			}
			ticks = append(ticks, tk)
			ms = append(ms, mant{m, e})
		}
	}
	if inner >= 3 {
		return ticks
	}
	// Too narrow for decades alone (step is 1 here, so every decade in range
	// is labelled): label 1, 2 and 5 × 10^e, whose neighbours are at least
	// 0.3 decade apart, or every k-th tick when that gives too few.
	if len(ticks) < 2 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	n := 0
	for i := range ticks {
		ticks[i].Label = ""
		if m := ms[i].m; m == 1 || m == 2 || m == 5 {
			ticks[i].Label = powLabel(m, ms[i].e)
			n++
		}
	}
	if n >= 2 {
		return ticks
	}
	every := (len(ticks) + t.max - 1) / t.max
	for i := range ticks {
		ticks[i].Label = ""
		if i%every == 0 {
			ticks[i].Label = powLabel(ms[i].m, ms[i].e)
		}
	}
	return ticks
}

// powLabel writes m × 10^e for powText: "10^-6", "2×10^3", and 1 to 9, 20
// to 90 plainly.
func powLabel(m, e int) string {
	switch {
	case e == 0:
		return strconv.Itoa(m)
	case e == 1 && m > 1:
		return strconv.Itoa(10 * m)
	case m == 1:
		return "10^" + strconv.Itoa(e)
	}
	return strconv.Itoa(m) + "×10^" + strconv.Itoa(e)
}

// powText is a text handler that typesets "B^E", E an integer, with the
// exponent smaller and raised (and − for the minus sign); other text it
// draws as text.Plain does. Tick labels use it.
type powText struct{ text.Plain }

// expScale is the size of an exponent relative to its base; expRise how far
// its baseline is raised, in units of the base's font size.
const (
	expScale = 0.7
	expRise  = 0.42
)

// split returns the base and the exponent of "B^E", or ok false.
func (powText) split(txt string) (base, exp string, ok bool) {
	base, exp, ok = strings.Cut(txt, "^")
	if !ok || base == "" || strings.Contains(txt, "\n") {
		return "", "", false
	}
	if _, err := strconv.Atoi(exp); err != nil {
		return "", "", false
	}
	return base, strings.Replace(exp, "-", "−", 1), true
}

func (h powText) small(fnt font.Font) font.Font {
	fnt.Size *= expScale
	return fnt
}

// Box is the bounding box of the base and its raised exponent.
func (h powText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := h.split(txt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	bw, bh, bd := h.Plain.Box(base, fnt)
	ew, eh, _ := h.Plain.Box(exp, h.small(fnt))
	return bw + ew, max(bh, expRise*fnt.Size+eh), bd
}

// Draw draws the base as text.Plain would draw the whole label, and the
// exponent after it.
func (h powText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, ok := h.split(txt)
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	w, _, _ := h.Box(txt, sty.Font)
	bw, _, _ := h.Plain.Box(base, sty.Font)
	face := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	// The baseline where Plain puts it for a one-line text of this box: the
	// exponent's extra height lies above the base.
	_, ht, dp := h.Box(txt, sty.Font)
	y := pt.Y + (ht+dp)*vg.Length(sty.YAlign) + sty.Font.Size - face.Extents().Ascent
	x := pt.X + vg.Length(sty.XAlign)*w
	c.SetColor(sty.Color)
	c.FillString(face, vg.Point{X: x, Y: y}, base)
	small := h.small(sty.Font)
	c.FillString(h.Fonts.Lookup(small, small.Size), vg.Point{X: x + bw, Y: y + expRise*sty.Font.Size}, exp)
}

// countMultiples counts the multiples of step in [a, b].
func countMultiples(a, b, step int) int {
	n := 0
	for e := a; e <= b; e++ {
		if e%step == 0 {
			n++
		}
	}
	return n
}

// Layout says where Save drew the parts of a figure, in points from the
// canvas's bottom-left corner. Inspect returns it, so that tests can check
// a figure mechanically: the title and the legend inside the canvas and off
// the data, tick labels apart, one style per series.
type Layout struct {
	Width, Height vg.Length
	Title         vg.Rectangle   // all lines of the title; zero when there is none
	Legend        vg.Rectangle   // zero when no series is named
	Data          []vg.Rectangle // each panel's data area
	// Each panel's title (wrapped to the panel's width); zero when the
	// panel has none.
	PanelTitles []vg.Rectangle
	// Each panel's tick labels, in tick order, on the X and on the Y axis.
	XTicks, YTicks [][]vg.Rectangle
	// Styles lists the named series of the figure once each, in legend
	// order.
	Styles []SeriesStyle
}

// SeriesStyle is how a series is drawn: Shape indexes the glyph shapes.
type SeriesStyle struct {
	Name   string
	Color  color.Color
	Shape  int
	Dashed bool
}

// Inspect lays fig out as Save would, draws it on a throw-away canvas and
// returns the Layout.
func Inspect(fig Figure) (*Layout, error) {
	_, l, err := render(fig, ".svg")
	return l, err
}

// wrap breaks s at spaces into lines no wider than width in sty (a word
// longer than width gets a line of its own).
func wrap(s string, sty text.Style, width vg.Length) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		try := strings.TrimSpace(line + " " + w)
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			try = w
		}
		line = try
	}
	return strings.Join(append(lines, line), "\n")
}

// newCanvas is a w×h canvas that writes the format named by ext.
func newCanvas(ext string, w, h vg.Length) vg.CanvasWriterTo {
	switch ext {
	case ".png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	case ".svg":
		return vgsvg.New(w, h)
	}
	return vgpdf.New(w, h)
}

// textStyle is the figures' text in size points, centred, top-aligned.
func textStyle(size vg.Length) text.Style {
	return text.Style{
		Font:    font.From(plot.DefaultFont, size),
		Handler: plot.DefaultTextHandler,
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Color:   color.Black,
	}
}

// drawTitle draws the figure's title, wrapped to width, at the top of dc
// and takes its room from dc; it returns where the title went.
func drawTitle(dc *draw.Canvas, title string, sty text.Style, width, pad vg.Length) vg.Rectangle {
	title = wrap(title, sty, width)
	at := vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}
	dc.FillText(sty, at, title)
	r := sty.Rectangle(title)
	dc.Max.Y -= sty.Height(title) + 2*pad
	return vg.Rectangle{Min: at.Add(r.Min), Max: at.Add(r.Max)}
}

// drawPanel draws one panel on its canvas and records in lay where its
// data area, title and ticks went.
func drawPanel(p *plot.Plot, c draw.Canvas, lay *Layout) {
	p.Draw(c)
	data := p.DataCanvas(c)
	lay.Data = append(lay.Data, data.Rectangle)
	var tr vg.Rectangle
	if p.Title.Text != "" {
		// Where plot.Draw puts it: centred, its top at the canvas's top.
		at := vg.Point{X: c.Center().X, Y: c.Max.Y + p.Title.TextStyle.FontExtents().Descent}
		r := p.Title.TextStyle.Rectangle(p.Title.Text)
		tr = vg.Rectangle{Min: at.Add(r.Min), Max: at.Add(r.Max)}
	}
	lay.PanelTitles = append(lay.PanelTitles, tr)
	xt, yt := tickBoxes(p, data)
	lay.XTicks, lay.YTicks = append(lay.XTicks, xt), append(lay.YTicks, yt)
}

// render draws fig into a byte slice in the format named by ext.
func render(fig Figure, ext string) (out []byte, lay *Layout, err error) {
	// gonum reports many problems by panicking; Save reports errors.
	defer func() {
		if r := recover(); r != nil {
			out, lay, err = nil, nil, fmt.Errorf("gonum/plot panicked: %v", r)
		}
	}()
	l, err := prepare(fig)
	if err != nil {
		return nil, nil, err
	}
	const pad vg.Length = 6 // points
	leg, entries := newLegend(l)
	var legW, legH vg.Length
	if len(entries) > 0 {
		legW, legH = legendSize(leg, entries)
	}
	rows, cols := fig.grid()
	w := panelWidth * vg.Length(cols)
	if legW > 0 {
		w += legW + 2*pad
	}
	h := panelHeight * vg.Length(rows)
	c := newCanvas(ext, w, h)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	lay = &Layout{Width: w, Height: h}

	if fig.Title != "" {
		lay.Title = drawTitle(&dc, fig.Title, textStyle(14), w-4*pad, pad)
	}
	// Save draws the axis labels itself: gonum reserves room for them at
	// the arithmetic middle of the axis range, which on a log axis lies near
	// the far end and squeezes the data area.
	xLabel := textStyle(12)
	xLabel.YAlign = draw.YBottom
	xLabelY := dc.Min.Y + pad
	if fig.XLabel != "" {
		dc.Min.Y += xLabel.Rectangle(fig.XLabel).Size().Y + pad
	}
	yText := fig.YLabel
	if l.floored {
		// On its own line: a rotated label longer than the panel is cut off.
		yText = strings.TrimPrefix(yText+"\n"+floorNote, "\n")
	}
	yLabel := textStyle(12)
	yLabel.Rotation = math.Pi / 2 // reads upwards; its top faces left
	yLabelX := dc.Min.X + pad
	if yText != "" {
		dc.Min.X += yLabel.Rectangle(yText).Size().X + pad
	}
	// The legend's strip, right of the panels.
	if legW > 0 {
		dc.Max.X -= legW + 2*pad
	}

	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 2 * pad, PadY: 2 * pad, PadTop: pad, PadLeft: pad, PadRight: 2 * pad}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for i := range fig.Panels {
		// Panel titles wrap to their tile, so that neighbours' titles
		// neither run into each other nor off the canvas.
		grid[i/cols][i%cols], err = newPanel(fig, l, i, tiles.At(dc, i%cols, i/cols).Size().X-2*pad)
		if err != nil {
			return nil, nil, err
		}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i := range fig.Panels {
		drawPanel(grid[i/cols][i%cols], canvases[i/cols][i%cols], lay)
		data := draw.Canvas{Rectangle: lay.Data[i]}
		// One X label a column, under the bottom row; one Y label a row.
		if fig.XLabel != "" && i+cols >= len(fig.Panels) {
			dc.FillText(xLabel, vg.Point{X: data.Center().X, Y: xLabelY}, fig.XLabel)
		}
		if i%cols == 0 && yText != "" {
			dc.FillText(yLabel, vg.Point{X: yLabelX, Y: data.Center().Y}, yText)
		}
	}
	if legW > 0 {
		// Top-aligned with the data areas, moved up if it is taller.
		top := lay.Data[0].Max.Y
		if top-legH < pad {
			top = min(h-pad, legH+pad)
		}
		x := dc.Max.X + pad
		box := vg.Rectangle{Min: vg.Point{X: x, Y: top - legH}, Max: vg.Point{X: x + legW, Y: top}}
		drawLegend(dc, leg, box)
		lay.Legend = box
	}
	for _, e := range entries {
		lay.Styles = append(lay.Styles, SeriesStyle{Name: e.name, Color: palette[e.style%len(palette)],
			Shape: shapeOf(e.style), Dashed: e.dashed})
	}

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), lay, nil
}

// tickBoxes returns where the panel's tick labels were drawn (the X labels
// centred under their ticks, the Y labels right-aligned beside them; the
// distance from the axis does not matter for telling whether they overlap).
func tickBoxes(p *plot.Plot, data draw.Canvas) (xs, ys []vg.Rectangle) {
	trX, trY := p.Transforms(&data)
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label == "" {
			continue
		}
		sty := p.X.Tick.Label
		r := sty.Rectangle(tk.Label)
		at := vg.Point{X: trX(tk.Value), Y: data.Min.Y}
		xs = append(xs, vg.Rectangle{Min: at.Add(r.Min), Max: at.Add(r.Max)})
	}
	for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if tk.Label == "" {
			continue
		}
		sty := p.Y.Tick.Label
		r := sty.Rectangle(tk.Label)
		at := vg.Point{X: data.Min.X, Y: trY(tk.Value)}
		ys = append(ys, vg.Rectangle{Min: at.Add(r.Min), Max: at.Add(r.Max)})
	}
	return xs, ys
}

// newPanel builds the gonum plot of panel i, without legend or axis labels;
// its title is wrapped to titleWidth.
func newPanel(fig Figure, l *layout, i int, titleWidth vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = wrap(fig.Panels[i].Title, p.Title.TextStyle, titleWidth)
	ticks := powText{text.Plain{Fonts: font.DefaultCache}}
	p.X.Tick.Label.Handler, p.Y.Tick.Label.Handler = ticks, ticks
	if fig.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{max: maxXLabels}
	}
	if fig.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{max: maxYLabels}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xDD}
	grid.Horizontal.Color = color.Gray{Y: 0xDD}
	p.Add(grid)
	for _, s := range l.panels[i] {
		if len(s.xy) == 0 {
			continue
		}
		line, points, err := newLinePoints(s)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
	}
	// Set after Add, which widens the axes to the data of this panel only.
	p.X.Min, p.X.Max = l.xMin, l.xMax
	p.Y.Min, p.Y.Max = l.yMin, l.yMax
	return p, nil
}

// newLinePoints draws s as a line with a glyph at each point, in its style.
func newLinePoints(s cleanSeries) (*plotter.Line, *plotter.Scatter, error) {
	line, points, err := plotter.NewLinePoints(s.xy)
	if err != nil {
		return nil, nil, err
	}
	col := palette[s.style%len(palette)]
	shape := glyphs[shapeOf(s.style)]
	line.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
	if s.dashed {
		line.LineStyle.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.8), Shape: shape}
	return line, points, nil
}

// shapeOf is the glyph of style st: past len(palette) styles the shape is
// shifted, so that (colour, shape) stays unique.
func shapeOf(st int) int {
	return (st + st/len(palette)) % len(glyphs)
}

// newLegend returns the figure's legend: each named series once, in style
// order, with the first panel's dashing.
func newLegend(l *layout) (*plot.Legend, []cleanSeries) {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font = font.From(plot.DefaultFont, 10)
	var entries []cleanSeries
	seen := map[string]bool{}
	for _, p := range l.panels {
		for _, s := range p {
			if s.name == "" || seen[s.name] {
				continue
			}
			seen[s.name] = true
			entries = append(entries, s)
		}
	}
	slices.SortStableFunc(entries, func(a, b cleanSeries) int { return a.style - b.style })
	for _, s := range entries {
		// The thumbnail needs no data: empty series still get an entry.
		line, points, err := newLinePoints(cleanSeries{style: s.style, dashed: s.dashed})
		if err != nil {
			panic(err) // unreachable: no points to reject
		}
		leg.Add(s.name, line, points)
	}
	return &leg, entries
}

// legendInset is the room between the legend's box and its entries.
const legendInset = vg.Length(3)

// legendSize is the box the legend's entries fill, from Legend.Draw's own
// layout rules, plus the inset.
func legendSize(leg *plot.Legend, entries []cleanSeries) (w, h vg.Length) {
	var enth, textw vg.Length
	for _, s := range entries {
		enth = max(enth, leg.TextStyle.Rectangle(s.name).Max.Y)
		textw = max(textw, leg.TextStyle.Rectangle(" "+s.name).Max.X)
	}
	n := vg.Length(len(entries))
	w = leg.ThumbnailWidth + textw + 2*legendInset
	h = n*enth + (n-1)*leg.Padding + leg.TextStyle.FontExtents().Descent + 2*legendInset
	return w, h
}

// drawLegend draws the legend in box on a white ground with a thin frame.
func drawLegend(c draw.Canvas, leg *plot.Legend, box vg.Rectangle) {
	c.SetColor(color.White)
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xAA}, Width: vg.Points(0.5)})
	c.Stroke(box.Path())
	inner := vg.Rectangle{
		Min: vg.Point{X: box.Min.X + legendInset, Y: box.Min.Y + legendInset},
		Max: vg.Point{X: box.Max.X - legendInset, Y: box.Max.Y - legendInset},
	}
	leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: inner})
}

// Problems lists what a reader would see as a fault of the drawn figure,
// as far as it can be checked mechanically: a title or legend that leaves
// the canvas, a legend over a panel's data area, tick labels of one axis
// that overlap, two named series with the same colour. Empty when there is
// none.
func (l *Layout) Problems() []string {
	var out []string
	canvas := vg.Rectangle{Max: vg.Point{X: l.Width, Y: l.Height}}
	inside := func(what string, r vg.Rectangle) {
		if r == (vg.Rectangle{}) {
			return
		}
		if r.Min.X < canvas.Min.X || r.Min.Y < canvas.Min.Y || r.Max.X > canvas.Max.X || r.Max.Y > canvas.Max.Y {
			out = append(out, fmt.Sprintf("%s %v leaves the canvas %v", what, r, canvas.Max))
		}
	}
	inside("title", l.Title)
	inside("legend", l.Legend)
	for i, r := range l.PanelTitles {
		inside(fmt.Sprintf("title of panel %d", i), r)
		for j, o := range l.PanelTitles[:i] {
			if r != (vg.Rectangle{}) && o != (vg.Rectangle{}) && overlap(r, o) {
				out = append(out, fmt.Sprintf("titles of panels %d and %d overlap", j, i))
			}
		}
		if r != (vg.Rectangle{}) && l.Title != (vg.Rectangle{}) && overlap(r, l.Title) {
			out = append(out, fmt.Sprintf("title of panel %d overlaps the figure's title", i))
		}
	}
	for i, d := range l.Data {
		if l.Legend != (vg.Rectangle{}) && overlap(l.Legend, d) {
			out = append(out, fmt.Sprintf("legend %v covers the data area of panel %d %v", l.Legend, i, d))
		}
		if l.Title != (vg.Rectangle{}) && overlap(l.Title, d) {
			out = append(out, fmt.Sprintf("title %v covers the data area of panel %d", l.Title, i))
		}
	}
	for i := range l.XTicks {
		for axis, rs := range map[string][]vg.Rectangle{"X": l.XTicks[i], "Y": l.YTicks[i]} {
			for j := 1; j < len(rs); j++ {
				if overlap(rs[j-1], rs[j]) {
					out = append(out, fmt.Sprintf("panel %d: %s tick labels %d and %d overlap", i, axis, j-1, j))
				}
			}
		}
	}
	for i, a := range l.Styles {
		for _, b := range l.Styles[:i] {
			if colorEq(a.Color, b.Color) {
				out = append(out, fmt.Sprintf("series %q and %q share a colour", a.Name, b.Name))
			}
		}
	}
	return out
}

// overlap reports whether two rectangles share more than an edge.
func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func colorEq(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}
