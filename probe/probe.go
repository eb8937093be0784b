package probe

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

// A Case is one dot product given to the unit: d = a·b + c.
type Case struct {
	A, B []float64
	C    float64
}

// Observation is a Case with what the unit returned and, for each candidate
// value of the feature, what the model with that value predicts.
type Observation struct {
	Case
	Note        string             `json:"note"`
	Got         float64            `json:"got"`
	Predictions map[string]float64 `json:"predictions,omitempty"`
}

// jsonNumber is x for encoding/json: NaN and ±Inf, which JSON numbers
// cannot hold, become the strings "NaN", "+Inf" and "-Inf".
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return x
}

func jsonNumbers(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = jsonNumber(x)
	}
	return out
}

// MarshalJSON writes a result or prediction that is NaN or ±Inf as a string
// (see jsonNumber).
func (o Observation) MarshalJSON() ([]byte, error) {
	preds := make(map[string]any, len(o.Predictions))
	for k, v := range o.Predictions {
		preds[k] = jsonNumber(v)
	}
	type plain struct {
		Case
		Note        string         `json:"note"`
		Got         any            `json:"got"`
		Predictions map[string]any `json:"predictions,omitempty"`
	}
	return json.Marshal(plain{o.Case, o.Note, jsonNumber(o.Got), preds})
}

// Finding is one inferred feature: its value, whether the tests could tell
// the candidates apart, and the evidence.
type Finding struct {
	Feature    string        `json:"feature"`
	Value      string        `json:"value"`
	Observable bool          `json:"observable"` // false: every candidate predicts the same results
	Consistent bool          `json:"consistent"` // false: no candidate predicts all results
	Candidates []string      `json:"candidates"` // the values that predict all results
	Modelled   int           `json:"modelled"`   // candidate values the generic model has for these formats
	Evidence   []Observation `json:"evidence"`
}

// Report is what Run infers about a unit.
type Report struct {
	Unit     string    `json:"unit"`
	Input    string    `json:"input"`
	Output   string    `json:"output"`
	Findings []Finding `json:"findings"`
	// Order says in which order the terms are added, as far as it matters.
	Order        string       `json:"order"`
	Monotonicity Monotonicity `json:"monotonicity"`
	// Seeds are the paper's tests with verdicts worded like its text.
	Seeds []SeedTest `json:"seeds"`
	// Fitted are the parameters of the generic model that reproduce every
	// observation; Fit builds the model. Model writes them on one line
	// (canonical form) and Spec as a unit spec for mma.Lookup, e.g. for
	// 'mwmm mma eval --unit SPEC'.
	Fitted mma.Params `json:"-"`
	Model  string     `json:"model"`
	Spec   string     `json:"spec"`
	Runs   int        `json:"cases_run"` // dot products run on the unit
	// Misses counts the random cases (of SampleSize, drawn by the
	// Generators) where the fitted model disagrees with the unit: 0 unless
	// the unit is outside what the generic model and the tests can tell.
	Misses     int `json:"random_misses"`
	SampleSize int `json:"random_cases"`
}

// A feature is one parameter of the generic model and the tests that
// discriminate its values.
type feature struct {
	name       string
	candidates func(p mma.Params) []string
	set        func(p *mma.Params, v string) bool // false: value not applicable
	get        func(p mma.Params) string
	tests      func(pr *prober, p mma.Params) []labelled
}

type labelled struct {
	note string
	c    Case
}

type prober struct {
	u       mma.Unit
	in, out format.Format
	sigma   float64 // scale of the tests, so that they fit the input format's range
	cache   map[string]float64
	runs    int // cases run on the unit
	// inferred memoises infer: the starts and settle's passes ask again
	// about the same feature under the same parameters (about half the
	// calls), and the answer depends on nothing else (the unit's results
	// are cached).
	inferred map[inferKey]inferred
	products map[float64][2]float64 // product's answers (absent: none)

	sample       []Case // random cases that judge fits, and the unit's results
	sampleGot    []float64
	sampleMisses map[mma.Params]int // misses on the sample, by parameters
	err          error
}

// Run measures the unit's numerical features and fits the generic model to
// them.
func Run(u mma.Unit) (Report, error) {
	in, out := u.Input(), u.Output()
	rep := Report{Unit: u.Name(), Input: in.Name(), Output: out.Name()}
	pr := &prober{u: u, in: in, out: out, cache: map[string]float64{}}
	pr.sigma = pr.scale()
	// Features interact, so one pass from one starting hypothesis can get
	// stuck; start from each kind of adder and keep the first inference
	// that explains every result.
	// Of those, prefer the one that also agrees with the unit on random
	// cases: the designed tests of narrow outputs can leave two different
	// adders (say an fp16 accumulator with many extra bits and an fp32
	// one) both consistent.
	var best []Finding
	var bestParams mma.Params
	bestMisses := 0
	for _, start := range pr.starts() {
		findings, fitted := pr.settle(start)
		if pr.err != nil {
			return rep, pr.err
		}
		switch n := inconsistent(findings); {
		case best == nil || n < inconsistent(best):
			best, bestParams = findings, fitted
			if n == 0 {
				bestMisses = pr.misses(fitted, nil, nil)
			}
		case n == 0:
			if m := pr.misses(fitted, nil, nil); m < bestMisses {
				best, bestParams, bestMisses = findings, fitted, m
			}
		}
		if inconsistent(best) == 0 && bestMisses == 0 {
			break
		}
	}
	// Where the designed tests left several values, the others' tests and
	// random cases decide; then settle again from there, so that each
	// finding is judged against the final parameters.
	for round := 0; round < 3; round++ {
		p := pr.disambiguate(best, bestParams)
		fs, q := pr.settle(p)
		if pr.err != nil {
			return rep, pr.err
		}
		if inconsistent(fs) > inconsistent(best) {
			break
		}
		best, bestParams = fs, q
		if inconsistent(best) == 0 && q == p {
			break
		}
	}
	rep.Findings, rep.Fitted = best, bestParams
	pr.confirm(rep.Findings, rep.Fitted)
	rep.Order = orderText(rep.Fitted)
	// One truth: the table, the model line and the spec all state the
	// canonical form of the fit.
	canon := Canonical(rep.Fitted)
	rep.Monotonicity = pr.monotonicity(rep.Fitted)
	rep.Seeds = pr.runSeeds(ulp(rep.Fitted), canon)
	rep.Model = canon.String()
	if spec, err := canon.Spec(); err == nil {
		rep.Spec = spec
	}
	rep.Misses = pr.misses(rep.Fitted, nil, nil)
	rep.SampleSize = len(pr.sample)
	rep.Runs = pr.runs
	// The findings state the fitted values (disambiguation may have changed
	// some).
	for i, fd := range rep.Findings {
		if fd.Consistent {
			rep.Findings[i].Value = featureNamed(fd.Feature).get(canon)
			if !fd.Observable && fd.Modelled == 1 {
				rep.Findings[i].Value += " (the model's only value for these formats)"
			} else if !fd.Observable {
				rep.Findings[i].Value += " (not observable: all candidates agree)"
			} else if fd.Feature == "carry bits" && len(fd.Candidates) > 1 && fd.Candidates[len(fd.Candidates)-1] == "unlimited" {
				// Every count from the smallest up explains the results.
				rep.Findings[i].Value = "at least " + fd.Candidates[0]
			}
		}
	}
	return rep, pr.err
}

// disambiguate settles the features the designed tests left open (several
// candidates explain them) with random cases from the generators: of the
// alternatives, keep the one that agrees with the unit most often.
func (pr *prober) disambiguate(fs []Finding, p mma.Params) mma.Params {
	var designed []Case
	for _, fd := range fs {
		for _, o := range fd.Evidence {
			designed = append(designed, o.Case)
		}
	}
	want := pr.evalAll(designed)
	best := pr.misses(p, designed, want)
	for _, fd := range fs {
		if best == 0 {
			break
		}
		f := featureNamed(fd.Feature)
		for _, v := range fd.Candidates {
			q := p
			if f.set(&q, v) {
				if n := pr.misses(q, designed, want); n < best {
					p, best = q, n
				}
			}
		}
	}
	return p
}

// misses counts the cases, of the random sample and the given ones with
// their results, where the model with parameters q disagrees with the unit.
func (pr *prober) misses(q mma.Params, cs []Case, got []float64) int {
	if pr.sample == nil {
		rng := rand.New(rand.NewPCG(1, 2))
		ks := []int{1, 2, 4, pr.u.BlockK(), 2*pr.u.BlockK() + 1, 3 * pr.u.BlockK()}
		slices.Sort(ks)
		for _, g := range Generators() {
			for _, k := range slices.Compact(ks) {
				pr.sample = append(pr.sample, g.Draw(rng, pr.in, pr.out, k, 64)...)
			}
		}
		pr.sampleGot = pr.evalAll(pr.sample)
	}
	m, err := mma.NewModel(q)
	if err != nil {
		return len(pr.sample) + len(cs) + 1
	}
	count := func(cs []Case, got []float64) int {
		n := 0
		for i, c := range cs {
			if !same(m.Dot(c.A, c.B, c.C), got[i]) {
				n++
			}
		}
		return n
	}
	// The starts often settle on the same parameters, and disambiguate
	// tries them again: their count on the sample is remembered.
	n, ok := pr.sampleMisses[q]
	if !ok {
		n = count(pr.sample, pr.sampleGot)
		if pr.sampleMisses == nil {
			pr.sampleMisses = map[mma.Params]int{}
		}
		pr.sampleMisses[q] = n
	}
	return n + count(cs, got)
}

// confirm narrows each finding's candidates to the values that, with the
// other features at their fitted values, predict every observation of every
// feature, not only the feature's own.
func (pr *prober) confirm(fs []Finding, p mma.Params) {
	var pool []Observation
	for _, fd := range fs {
		pool = append(pool, fd.Evidence...)
	}
	for i, fd := range fs {
		f := featureNamed(fd.Feature)
		var keep []string
		for _, v := range fd.Candidates {
			q := p
			if !f.set(&q, v) {
				continue
			}
			m, err := mma.NewModel(q)
			if err != nil {
				continue
			}
			ok := true
			for _, o := range pool {
				if !same(m.Dot(o.A, o.B, o.C), o.Got) {
					ok = false
					break
				}
			}
			if ok {
				keep = append(keep, v)
			}
		}
		fs[i].Candidates = keep
	}
}

func featureNamed(name string) feature {
	for _, f := range features() {
		if f.name == name {
			return f
		}
	}
	panic("probe: no feature " + name)
}

// settle infers each feature in turn, with the others at their current
// values, until a pass changes nothing.
func (pr *prober) settle(cur mma.Params) ([]Finding, mma.Params) {
	feats := features()
	findings := make([]Finding, len(feats))
	for pass := 0; pass < 4; pass++ {
		changed := false
		for i, f := range feats {
			fd, next := pr.infer(f, cur)
			if f.get(next) != f.get(cur) {
				changed = true
			}
			cur, findings[i] = next, fd
		}
		if !changed && pass > 0 {
			break
		}
	}
	return findings, cur
}

// accumulatorGuess is the precision q of the sum's last rounding, read from
// 1 + 2^-j for j = 1..40: the smallest increment over 1 that comes back is
// 2^(1-q), whatever the rounding (toward zero it is the last bit kept, up
// it is what every tiny term rounds to). It is a starting point: features
// tested under a wrong precision may lock each other.
func (pr *prober) accumulatorGuess() int {
	var cs []Case
	var sigmas []float64
	for j := 1; j <= 40; j++ {
		if c, sigma, ok := pr.scaledDot(1, math.Ldexp(1, -j)); ok {
			cs, sigmas = append(cs, c), append(sigmas, sigma)
		}
	}
	q := 0
	for i, got := range pr.evalAll(cs) {
		if d := got/sigmas[i] - 1; d > 0 {
			if _, e := math.Frexp(d); 2-e > q {
				q = 2 - e
			}
		}
	}
	return q
}

func casesOf(ts []labelled) []Case {
	cs := make([]Case, len(ts))
	for i, t := range ts {
		cs[i] = t.c
	}
	return cs
}

func inconsistent(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if !f.Consistent {
			n++
		}
	}
	return n
}

// starts are the starting hypotheses: the tensor-core adder, and adders that
// normalise after each addition, exact or truncating, c with or after.
func (pr *prober) starts() []mma.Params {
	var ps []mma.Params
	accs := []format.Format{pr.out}
	if pr.out.Precision() < 24 {
		accs = append(accs, format.Binary32)
	}
	if q := pr.accumulatorGuess(); q > pr.in.Precision() && q < pr.out.Precision() {
		acc := pr.initial()
		if accumulatorFeature().set(&acc, strconv.Itoa(q)) {
			accs = append(accs, acc.Accumulator)
		}
	}
	for _, acc := range accs {
		for _, norm := range []string{"end", "each, largest first", "each, in order"} {
			for _, extra := range []int{0, mma.Unlimited} {
				for _, after := range []bool{false, true} {
					for _, mode := range []format.Mode{format.TowardZero, format.NearestEven} {
						p := pr.initial()
						normFeature().set(&p, norm)
						p.Accumulator = acc
						p.ExtraBits, p.AddendAfter, p.AccumulatorMode = extra, after, mode
						if _, err := mma.NewModel(p); err == nil {
							ps = append(ps, p)
						}
					}
				}
			}
		}
	}
	return ps
}

// orderText says what the fitted model implies about the order of the
// additions.
func orderText(p mma.Params) string {
	c := Canonical(p)
	switch {
	case c.BlockK == 1 && !c.NormalizeEach:
		return "in index order, c first: one product per step (an FMA chain)"
	case !c.NormalizeEach:
		return "irrelevant within a block: every term is aligned to one grid and the sum is normalised once; blocks in index order"
	case c.Order == mma.InOrder:
		return "in index order, c first, each partial sum normalised"
	}
	return "largest magnitude first, each partial sum normalised"
}

// Fit builds the generic model with the report's parameters.
func Fit(r Report) (*mma.Model, error) {
	p := r.Fitted
	p.Name = "fit of " + r.Unit
	return mma.NewModel(p)
}

// initial is the starting hypothesis: a V100-like adder with the unit's
// formats and block size.
func (pr *prober) initial() mma.Params {
	return mma.Params{
		Input: pr.in, Output: pr.out, BlockK: pr.u.BlockK(),
		InputConversion: format.NearestEven,
		Accumulator:     pr.out, AccumulatorMode: format.TowardZero,
		ExtraBits: 0, CarryBits: mma.Unlimited, OutputMode: format.NearestEven,
	}
}

// scale picks the power of two σ that dot tries first: one that makes the
// products σ·2^-40 to σ·2^4 products of two normal inputs where the input
// range allows.
func (pr *prober) scale() float64 {
	lo, hi := 2*pr.in.Emin(), 2*pr.in.Emax()
	e := 0
	if lo > -40 {
		e = lo + 40
	}
	if e+4 > hi {
		e = hi - 4
	}
	return math.Ldexp(1, e)
}

// eval runs a case on the unit, once.
func (pr *prober) eval(c Case) float64 {
	return pr.evalAll([]Case{c})[0]
}

// evalAll runs the cases not run before on the unit, one Dots call per
// length (one launch each on hardware), and returns every result.
func (pr *prober) evalAll(cs []Case) []float64 {
	got := make([]float64, len(cs))
	byLen := map[int][]int{} // indices of the cases not in the cache
	var key []byte
	for i, c := range cs {
		key = appendCaseKey(key[:0], c)
		if d, ok := pr.cache[string(key)]; ok { // a lookup by string(key) does not copy it
			got[i] = d
		} else {
			byLen[len(c.A)] = append(byLen[len(c.A)], i)
		}
	}
	for k, idx := range byLen {
		batch := make([]Case, len(idx))
		for j, i := range idx {
			batch[j] = cs[i]
		}
		d, err := runCases(pr.u, k, batch)
		if err != nil && pr.err == nil {
			pr.err = err
		}
		pr.runs += len(batch)
		for j, i := range idx {
			got[i] = d[j]
			pr.cache[string(appendCaseKey(key[:0], cs[i]))] = d[j]
		}
	}
	return got
}

// appendCaseKey appends the bits of c's values, which identify the case.
func appendCaseKey(b []byte, c Case) []byte {
	for _, x := range c.A {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	for _, x := range c.B {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(c.C))
}

// liftedTests are f's tests under hypothesis p and, when p's accumulator is
// wider than the output, their lifted variants.
func (pr *prober) liftedTests(f feature, p mma.Params) []labelled {
	tests := f.tests(pr, p)
	if p.Accumulator.Precision() > pr.out.Precision() {
		for _, t := range slices.Clone(tests) {
			tests = append(tests, pr.lift(t, 1)...)
			tests = append(tests, pr.lift(t, 3)...)
		}
	}
	return tests
}

type inferKey struct {
	feature string
	p       mma.Params
}

type inferred struct {
	fd   Finding
	next mma.Params
}

// infer keeps the candidate values of f whose models predict every test.
func (pr *prober) infer(f feature, cur mma.Params) (Finding, mma.Params) {
	k := inferKey{f.name, cur}
	if r, ok := pr.inferred[k]; ok {
		fd := r.fd
		fd.Candidates = slices.Clone(fd.Candidates)
		return fd, r.next
	}
	fd, next := pr.inferOnce(f, cur)
	if pr.inferred == nil {
		pr.inferred = map[inferKey]inferred{}
	}
	pr.inferred[k] = inferred{fd, next}
	fd.Candidates = slices.Clone(fd.Candidates)
	return fd, next
}

func (pr *prober) inferOnce(f feature, cur mma.Params) (Finding, mma.Params) {
	fd := Finding{Feature: f.name, Consistent: true}
	tests := pr.liftedTests(f, cur)
	cands := f.candidates(cur)
	models := map[string]*mma.Model{}
	for _, v := range cands {
		p := cur
		if !f.set(&p, v) {
			continue
		}
		if m, err := mma.NewModel(p); err == nil {
			models[v] = m
		}
	}
	fd.Modelled = len(models)
	alive := map[string]bool{}
	for v := range models {
		alive[v] = true
	}
	distinct := false
	if len(tests) > 0 {
		fd.Evidence = make([]Observation, 0, len(tests))
	}
	got := pr.evalAll(casesOf(tests))
	for i, t := range tests {
		obs := Observation{Case: t.c, Note: t.note, Got: got[i], Predictions: make(map[string]float64, len(models))}
		var first *float64
		for _, v := range cands {
			m, ok := models[v]
			if !ok {
				continue
			}
			pred := m.Dot(t.c.A, t.c.B, t.c.C)
			obs.Predictions[v] = pred
			if first == nil {
				first = &pred
			} else if !same(*first, pred) {
				distinct = true
			}
			if !same(pred, obs.Got) {
				alive[v] = false
			}
		}
		fd.Evidence = append(fd.Evidence, obs)
	}
	for _, v := range cands {
		if alive[v] {
			fd.Candidates = append(fd.Candidates, v)
		}
	}
	fd.Observable = distinct
	next := cur
	switch {
	case len(fd.Candidates) == 0:
		fd.Consistent = false
		fd.Value = f.get(cur) + " (no candidate predicts all results)"
	case slices.Contains(fd.Candidates, f.get(cur)):
		fd.Value = f.get(cur)
	default:
		f.set(&next, fd.Candidates[0])
		fd.Value = fd.Candidates[0]
	}
	if !distinct && len(fd.Candidates) > 0 {
		fd.Value += " (not observable: all candidates agree)"
	}
	return fd, next
}

func same(x, y float64) bool {
	return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
}

// product returns normal input values a, b with a·b = t.
func (pr *prober) product(t float64) (float64, float64, bool) {
	if t == 0 {
		return 0, 0, true
	}
	// The tests ask for the same products over and over: remember them.
	if ab, ok := pr.products[t]; ok {
		return ab[0], ab[1], !math.IsNaN(ab[0])
	}
	a, b, ok := pr.factor(t)
	if pr.products == nil {
		pr.products = map[float64][2]float64{}
	}
	if !ok {
		a = math.NaN()
	}
	pr.products[t] = [2]float64{a, b}
	return a, b, ok
}

// factor is product, not remembered.
func (pr *prober) factor(t float64) (float64, float64, bool) {
	for s := pr.in.Emin(); s <= pr.in.Emax(); s++ {
		b := math.Ldexp(1, s)
		a := t / b
		if pr.in.IsRepresentable(a) && math.Abs(a) >= pr.in.MinNormal() && math.Abs(a) <= pr.in.MaxFinite() {
			return a, b, true
		}
	}
	// Products with more bits than one input holds: split the odd integer
	// significand m of t into two factors of at most p bits each.
	frac, e := math.Frexp(math.Abs(t))
	m, shift := uint64(frac*(1<<53)), e-53
	for m%2 == 0 {
		m, shift = m/2, shift+1
	}
	p := uint(pr.in.Precision())
	if bits.Len64(m) > 2*int(p) {
		return 0, 0, false
	}
	for d := uint64(3); d*d <= m; d += 2 {
		if m%d != 0 || bits.Len64(d) > int(p) || bits.Len64(m/d) > int(p) {
			continue
		}
		for s := pr.in.Emin() - int(p); s <= pr.in.Emax(); s++ {
			a, b := math.Ldexp(float64(d), s), math.Ldexp(float64(m/d), shift-s)
			if pr.in.IsRepresentable(a) && pr.in.IsRepresentable(b) && a >= pr.in.MinNormal() && b >= pr.in.MinNormal() &&
				a <= pr.in.MaxFinite() && b <= pr.in.MaxFinite() {
				return math.Copysign(a, t), b, true
			}
		}
	}
	return 0, 0, false
}

// dot builds a case whose products are ts and whose addend is c, all scaled
// by a power of two σ that makes every product a product of two normal
// inputs and c a normal output value; false if there is none. Scaling by a
// power of two changes nothing away from the ends of the range, so each
// test may pick its own.
func (pr *prober) dot(c float64, ts ...float64) (Case, bool) {
	cs, _, ok := pr.scaledDot(c, ts...)
	return cs, ok
}

// scaledDot is dot that also returns σ.
func (pr *prober) scaledDot(c float64, ts ...float64) (Case, float64, bool) {
	// One pair of slices for every σ tried: a failed try's values are
	// overwritten by the next.
	a, b := make([]float64, len(ts)), make([]float64, len(ts))
	for i := 0; i < pr.sigmaCount(); i++ {
		sigma := pr.sigmaAt(i)
		if cs, ok := pr.scaledCase(sigma, c, ts, a, b); ok {
			return cs, sigma, true
		}
	}
	return Case{}, 0, false
}

// dotPair is dot for two cases with one σ for both, so that a term that is
// larger in the second is larger in the built cases too.
func (pr *prober) dotPair(c0 float64, ts0 []float64, c1 float64, ts1 []float64) (Case, Case, bool) {
	a0, b0 := make([]float64, len(ts0)), make([]float64, len(ts0))
	a1, b1 := make([]float64, len(ts1)), make([]float64, len(ts1))
	for i := 0; i < pr.sigmaCount(); i++ {
		sigma := pr.sigmaAt(i)
		if x, ok := pr.scaledCase(sigma, c0, ts0, a0, b0); ok {
			if y, ok := pr.scaledCase(sigma, c1, ts1, a1, b1); ok {
				return x, y, true
			}
		}
	}
	return Case{}, Case{}, false
}

// The scales dot tries, in order: the prober's own, then powers of two
// down the output's range.
func (pr *prober) sigmaCount() int {
	if d := pr.out.Emax() - 8 - (pr.out.Emin() + 48); d >= 0 {
		return 2 + d/2
	}
	return 1
}

func (pr *prober) sigmaAt(i int) float64 {
	if i == 0 {
		return pr.sigma
	}
	return math.Ldexp(1, pr.out.Emax()-8-2*(i-1))
}

// scaledCase is the case of c and products ts scaled by σ, its inputs
// written to a and b, if the unit's formats hold it: c a normal output
// value, each product a·b of inputs.
func (pr *prober) scaledCase(sigma, c float64, ts, a, b []float64) (Case, bool) {
	cs := Case{C: c * sigma, A: a, B: b}
	if !pr.out.IsRepresentable(cs.C) || cs.C != 0 && math.Abs(cs.C) < pr.out.MinNormal() {
		return cs, false
	}
	for i, t := range ts {
		var ok bool
		if cs.A[i], cs.B[i], ok = pr.product(t * sigma); !ok {
			return cs, false
		}
	}
	return cs, true
}

// test is a labelled case of dot, or none if it cannot be built in the
// unit's formats.
func (pr *prober) test(note string, c float64, ts ...float64) []labelled {
	if cs, ok := pr.dot(c, ts...); ok {
		return []labelled{{note, cs}}
	}
	return nil
}

// lift returns the case with half an output ulp of its sum (times mult)
// added, as c when c is zero, else as one more product: when the
// accumulator is wider than the output, the output then shows on which
// side of the unlifted result the accumulator's result fell.
func (pr *prober) lift(t labelled, mult float64) []labelled {
	s := t.c.C
	for i := range t.c.A {
		s += t.c.A[i] * t.c.B[i]
	}
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return nil
	}
	_, e := math.Frexp(s)
	l := math.Copysign(mult*math.Ldexp(1, e-pr.out.Precision()-1), s)
	note := t.note + " (lifted by " + strconv.FormatFloat(mult, 'g', -1, 64) + "/2 output ulp)"
	c := t.c
	if c.C == 0 && pr.out.IsRepresentable(l) && math.Abs(l) >= pr.out.MinNormal() {
		c.C = l
		return []labelled{{note, c}}
	}
	a, b, ok := pr.product(l)
	if !ok {
		return nil
	}
	c.A, c.B = append(slices.Clone(c.A), a), append(slices.Clone(c.B), b)
	return []labelled{{note, c}}
}
