package solve

// A Resident holds refinement's vectors (b, the iterate x, the residual
// r and the best iterate) where A and the factors are, in a GPU's memory:
// a step of classical refinement then brings two norms to the host and
// no n-vector. Refinement asks a ResidentFactorization for one.
type Resident interface {
	// Start sets x = M⁻¹·b, the first iterate.
	Start() error
	// Residual sets r = b − A·x in fp64 and returns ‖r‖∞ and ‖x‖∞ (NaN
	// when either vector holds one).
	Residual() (normR, normX float64, err error)
	// Correct sets x = x + M⁻¹·r: a step of classical refinement.
	Correct() error
	// Add sets x = x + d.
	Add(d []float64) error
	// Keep copies x into the best iterate.
	Keep() error
	// Read copies one of the vectors into dst.
	Read(v ResidentVector, dst []float64) error
	Free() error
}

// A DoubleWordResident also computes its residual in double-word
// arithmetic, for Residual DoubleWord and AutoResidual.
type DoubleWordResident interface {
	Resident
	// ResidualDoubleWord is Residual with r = b − A·x in double-word
	// arithmetic, rounded to fp64 once.
	ResidualDoubleWord() (normR, normX float64, err error)
}

// canDoubleWord says whether res computes double-word residuals: host
// vectors for a dense A or a DoubleWordOperator, or a DoubleWordResident.
func canDoubleWord(res Resident) bool {
	if h, ok := res.(*hostResident); ok {
		_, isDense := h.a.(dense)
		_, isDW := h.a.(DoubleWordOperator)
		return isDense || isDW
	}
	_, ok := res.(DoubleWordResident)
	return ok
}

// ResidentVector names a Resident's vectors that refinement reads.
type ResidentVector int

const (
	IterateVector  ResidentVector = iota // x
	ResidualVector                       // r, as the last Residual left it
	BestVector                           // the iterate last kept
)

// A ResidentFactorization can keep refinement's vectors beside itself.
// NewResident returns nil (and no error) for an operator it cannot pair
// with; refinement then keeps them on the host.
type ResidentFactorization interface {
	Factorization
	NewResident(a Operator, b []float64) (Resident, error)
}

// newResident is the factorization's Resident for a when it has one that
// computes the residuals the options ask for and they keep the
// preconditioner in fp64, else host vectors.
func newResident(a Operator, b []float64, fa Factorization, opt Options) (Resident, error) {
	_, isDense := a.(dense)
	if rf, ok := fa.(ResidentFactorization); ok && !isDense && opt.Precond == FP64 {
		r, err := rf.NewResident(a, b)
		if err != nil {
			return nil, err
		}
		if _, dw := r.(DoubleWordResident); r != nil && (opt.Residual != DoubleWord || dw) {
			return r, nil
		}
		if r != nil {
			if err := r.Free(); err != nil {
				return nil, err
			}
		}
	}
	n := len(b)
	return &hostResident{a: a, fa: fa, opt: opt, b: b, x: make([]float64, n), r: make([]float64, n)}, nil
}

// hostResident keeps the vectors here: the Resident of factors that have
// none, and of the double-word products.
type hostResident struct {
	a       Operator
	fa      Factorization
	opt     Options
	b, x, r []float64
	best    []float64
}

func (h *hostResident) Start() error {
	copy(h.x, h.b)
	return h.fa.Solve(h.x)
}

func (h *hostResident) Residual() (float64, float64, error) {
	return h.residual(FP64)
}

func (h *hostResident) ResidualDoubleWord() (float64, float64, error) {
	return h.residual(DoubleWord)
}

func (h *hostResident) residual(p Residual) (float64, float64, error) {
	if err := residualOf(p, h.a, h.x, h.b, h.r); err != nil {
		return 0, 0, err
	}
	return maxAbs(h.r), maxAbs(h.x), nil
}

func (h *hostResident) Correct() error {
	d := append([]float64(nil), h.r...)
	if err := precondition(h.fa, h.opt, d); err != nil {
		return err
	}
	return h.Add(d)
}

func (h *hostResident) Add(d []float64) error {
	for i := range h.x {
		h.x[i] += d[i]
	}
	return nil
}

func (h *hostResident) Keep() error {
	h.best = append(h.best[:0], h.x...)
	return nil
}

func (h *hostResident) Read(v ResidentVector, dst []float64) error {
	copy(dst, [...][]float64{h.x, h.r, h.best}[v])
	return nil
}

func (h *hostResident) Free() error { return nil }

// precondition overwrites d with M⁻¹·d, in double-word arithmetic when
// the options ask for it.
func precondition(fa Factorization, opt Options, d []float64) error {
	if opt.Precond == DoubleWord {
		return solveDW(fa, d, make([]float64, len(d)))
	}
	return fa.Solve(d)
}
