// Package plotting renders the figures of numerical papers: error against
// matrix size n on log-log axes, in one or more side-by-side panels, written
// as PNG, SVG or PDF through gonum.org/v1/plot.
//
// A Figure holds Panels; a Panel holds Series. Save lays the panels out in a
// row (4.5in × 3.8in each) with a shared X range and a shared Y range, so
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
// Tick labels on log axes are powers of ten written "1e-06": the default
// Liberation fonts lack the superscript digits ⁰ ⁹ and ⁻, and gonum's LaTeX
// handler does not typeset exponents.
package plotting

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

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

// Okabe–Ito palette, yellow last because it is faint on white.
var palette = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
	color.NRGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	color.NRGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	color.NRGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	color.NRGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
	color.NRGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	color.NRGBA{0x00, 0x00, 0x00, 0xFF}, // black
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

// Save writes fig to path; the extension picks the format: .png, .svg or .pdf.
// (any other extension is an error naming the valid ones)
func Save(fig Figure, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png", ".svg", ".pdf":
	default:
		return fmt.Errorf("plotting: %s: extension %q not supported; use .png, .svg or .pdf", path, ext)
	}
	b, err := render(fig, ext)
	if err != nil {
		return fmt.Errorf("plotting: %s: %w", path, err)
	}
	// Rendered in memory first, so a failed render leaves no partial file.
	return os.WriteFile(path, b, 0o644)
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
// holding fewer than two powers of ten labels the 2..9 × 10^e ticks too.
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
	var ticks []plot.Tick
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
				tk.Label = strconv.FormatFloat(v, 'e', 0, 64)
			}
			ticks = append(ticks, tk)
		}
	}
	if inner >= 2 {
		return ticks
	}
	// Too narrow for decades alone (step is 1 here, so every decade in range
	// is labelled): label every k-th tick of all of them instead.
	if len(ticks) < 2 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	every := (len(ticks) + t.max - 1) / t.max
	for i := range ticks {
		ticks[i].Label = ""
		if i%every == 0 {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', -1, 64)
		}
	}
	return ticks
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

// render draws fig into a byte slice in the format named by ext.
func render(fig Figure, ext string) (out []byte, err error) {
	// gonum reports many problems by panicking; Save reports errors.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("gonum/plot panicked: %v", r)
		}
	}()
	l, err := prepare(fig)
	if err != nil {
		return nil, err
	}
	w := panelWidth * vg.Length(len(fig.Panels))
	h := panelHeight
	var c vg.CanvasWriterTo
	switch ext {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	case ".svg":
		c = vgsvg.New(w, h)
	case ".pdf":
		c = vgpdf.New(w, h)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	const pad vg.Length = 6 // points
	style := func(size vg.Length) text.Style {
		return text.Style{
			Font:    font.From(plot.DefaultFont, size),
			Handler: plot.DefaultTextHandler,
			XAlign:  draw.XCenter,
			YAlign:  draw.YTop,
			Color:   color.Black,
		}
	}
	if fig.Title != "" {
		sty := style(14)
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}, fig.Title)
		dc.Max.Y -= sty.Rectangle(fig.Title).Size().Y + 2*pad
	}
	// Save draws the axis labels itself: gonum reserves room for them at
	// the arithmetic middle of the axis range, which on a log axis lies near
	// the far end and squeezes the data area.
	xLabel := style(12)
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
	yLabel := style(12)
	yLabel.Rotation = math.Pi / 2 // reads upwards; its top faces left
	yLabelX := dc.Min.X + pad
	if yText != "" {
		dc.Min.X += yLabel.Rectangle(yText).Size().X + pad
	}

	plots := make([]*plot.Plot, len(fig.Panels))
	for i := range fig.Panels {
		plots[i], err = newPanel(fig, l, i)
		if err != nil {
			return nil, err
		}
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: 2 * pad, PadTop: pad, PadLeft: pad, PadRight: 2 * pad}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	legendOnlyFirst := sameNames(l.panels)
	for i, p := range plots {
		p.Draw(canvases[0][i])
		data := p.DataCanvas(canvases[0][i])
		if fig.XLabel != "" {
			dc.FillText(xLabel, vg.Point{X: data.Center().X, Y: xLabelY}, fig.XLabel)
		}
		if i == 0 && yText != "" {
			dc.FillText(yLabel, vg.Point{X: yLabelX, Y: data.Center().Y}, yText)
		}
		if i == 0 || !legendOnlyFirst {
			drawLegend(p, data, l.panels[i])
		}
	}

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newPanel builds the gonum plot of panel i, without legend or axis labels.
func newPanel(fig Figure, l *layout, i int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fig.Panels[i].Title
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
	// Past len(palette) styles, shift the shape so (colour, shape) stays unique.
	shape := glyphs[(s.style+s.style/len(palette))%len(glyphs)]
	line.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
	if s.dashed {
		line.LineStyle.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.8), Shape: shape}
	return line, points, nil
}

// sameNames reports whether every panel lists the same named series in the
// same order; one legend then serves the whole row.
func sameNames(panels [][]cleanSeries) bool {
	names := func(ss []cleanSeries) []string {
		var n []string
		for _, s := range ss {
			if s.name != "" {
				n = append(n, s.name)
			}
		}
		return n
	}
	first := names(panels[0])
	for _, ss := range panels[1:] {
		if strings.Join(names(ss), "\x00") != strings.Join(first, "\x00") {
			return false
		}
	}
	return true
}

// drawLegend draws the legend of one panel on a translucent white box, in
// the corner of the data area that hides the fewest points and line pieces
// (top-left on ties: error-vs-n curves usually rise to the right).
func drawLegend(p *plot.Plot, data draw.Canvas, series []cleanSeries) {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font = font.From(plot.DefaultFont, 10)
	var enth, textw vg.Length
	n := 0
	for _, s := range series {
		if s.name == "" {
			continue
		}
		// The thumbnail needs no data: empty series still get an entry.
		line, points, err := newLinePoints(cleanSeries{style: s.style, dashed: s.dashed})
		if err != nil {
			panic(err) // unreachable: no points to reject
		}
		leg.Add(s.name, line, points)
		enth = max(enth, leg.TextStyle.Rectangle(s.name).Max.Y)
		textw = max(textw, leg.TextStyle.Rectangle(" "+s.name).Max.X)
		n++
	}
	if n == 0 {
		return
	}
	// The size Legend.Draw fills, from its own layout rules.
	const inset, margin = vg.Length(3), vg.Length(4)
	w := leg.ThumbnailWidth + textw + 2*inset
	h := vg.Length(n)*enth + vg.Length(n-1)*leg.Padding + leg.TextStyle.FontExtents().Descent + 2*inset

	trX, trY := p.Transforms(&data)
	var pts []vg.Point
	for _, s := range series {
		for k, xy := range s.xy {
			q := vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
			pts = append(pts, q, q, q, q) // a point weighs like 4 line samples
			if k > 0 {
				prev := vg.Point{X: trX(s.xy[k-1].X), Y: trY(s.xy[k-1].Y)}
				for t := 1; t < 16; t++ {
					f := vg.Length(t) / 16
					pts = append(pts, vg.Point{X: prev.X + f*(q.X-prev.X), Y: prev.Y + f*(q.Y-prev.Y)})
				}
			}
		}
	}
	left, right := data.Min.X+margin, data.Max.X-margin-w
	top, bottom := data.Max.Y-margin-h, data.Min.Y+margin
	corners := []vg.Point{{X: left, Y: top}, {X: right, Y: top}, {X: right, Y: bottom}, {X: left, Y: bottom}}
	best, bestScore := corners[0], -1
	for _, o := range corners {
		score := 0
		for _, q := range pts {
			if q.X >= o.X-margin && q.X <= o.X+w+margin && q.Y >= o.Y-margin && q.Y <= o.Y+h+margin {
				score++
			}
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = o, score
		}
	}

	box := vg.Rectangle{Min: best, Max: vg.Point{X: best.X + w, Y: best.Y + h}}
	data.SetColor(color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xD8})
	data.Fill(box.Path())
	data.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xAA}, Width: vg.Points(0.5)})
	data.Stroke(box.Path())
	inner := vg.Rectangle{
		Min: vg.Point{X: box.Min.X + inset, Y: box.Min.Y + inset},
		Max: vg.Point{X: box.Max.X - inset, Y: box.Max.Y - inset},
	}
	leg.Draw(draw.Canvas{Canvas: data.Canvas, Rectangle: inner})
}
