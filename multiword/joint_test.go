package multiword_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// jointPlans are joint plans of the three word formats: double-fp16 with
// scaling, triple-bf16 and 3xTF32, each summation, b = 32 and 64.
func jointPlans(t *testing.T) []multiword.Plan {
	var ps []multiword.Plan
	for _, base := range []string{"double-fp16:scale=on", "triple-bf16:scale=off", "double-tf32:scale=off"} {
		for _, sum := range []string{"v1", "v2", "pair"} {
			for _, b := range []string{"32", "64"} {
				ps = append(ps, lookupAll(t, base+",joint=on,sum="+sum+",b="+b)...)
			}
		}
		ps = append(ps, lookupAll(t, base+",joint=on,sum=v2,b=32,group=8", base+",joint=on,sum=v2,b=32,group=3",
			base+",joint=products,sum=v2,b=32,group=16", base+",joint=products,sum=pair,b=64",
			base+",joint=products,sum=pair,b=32,group=16")...)
	}
	return ps
}

// The measured error of joint plans stays within Plan.Bound, on the
// reference engine and on H100's tensor cores (truncating adders), at k
// below, off and over the blocks and k-steps.
func TestJointWithinBound(t *testing.T) {
	h100, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(51, 52))
	const m, n = 3, 4
	ks := []int{5, 37, 300}
	if testing.Short() {
		ks = ks[:2]
	}
	for _, e := range []multiword.Engine{multiword.Reference{}, h100} {
		for _, p := range jointPlans(t) {
			for _, k := range ks {
				for _, d := range distributions[:3] {
					a, b := d.matrix(rng, m*k), d.matrix(rng, k*n)
					got, bnd, err := multiwordtest.Check(e, p, m, n, k, a, b)
					if err != nil {
						t.Errorf("%s: %v", d.name, err)
					}
					if k == 300 && d.name[0] == 'u' && strings.HasSuffix(p.Name, "sum=pair,b=64") {
						t.Logf("%s %s k=%d %s: error %.3g, bound %.3g", e.Name(), p.Name, k, d.name, got, bnd)
					}
				}
			}
		}
	}
}

// The joint bound charges every term with the whole chain of a block, P·b
// products for P products: it exceeds the bound of the same plan with
// separate blocks, and grows with the block.
func TestJointBoundShape(t *testing.T) {
	ue := multiword.UnitError{U: 0x1p-24, K: 1}
	for _, spec := range []string{"double-fp16:sum=pair,b=64", "triple-bf16:sum=v1,b=32", "double-tf32:sum=v2,b=64"} {
		sep, joint := lookupAll(t, spec)[0], lookupAll(t, spec+",joint=on")[0]
		const k = 4096
		rs, err := sep.Bound(k, ue)
		if err != nil {
			t.Fatal(err)
		}
		rj, err := joint.Bound(k, ue)
		if err != nil {
			t.Fatal(err)
		}
		// First order: the kept products' weight Σ u^(i+j) ≈ 1 times
		// P·b·U for the chain of the leading product's block.
		chain := float64(joint.Products()*joint.Block) * ue.U
		if !(rj.Total > rs.Total) || !(rj.Total > chain) || !(rj.Total < 2*chain+rs.Total) {
			t.Errorf("%s: joint bound %.3g, separate %.3g, chain P·b·U %.3g", spec, rj.Total, rs.Total, chain)
		}
		joint.Block *= 2
		if r2, _ := joint.Bound(k, ue); !(r2.Total > rj.Total) {
			t.Errorf("%s: joint bound %.3g at b=%d not above %.3g", spec, r2.Total, joint.Block, rj.Total)
		}
	}
}

// With one word there is one product, so the joint schedule is the
// separate one: the same bits on units whose k divides the k-step (the
// block FMA chains its own steps as the joint plan chains its calls). The
// reference engine rounds once per call instead, so it is left out.
func TestJointOneWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	const m, n = 3, 4
	for _, unit := range []string{"h100", "a100"} {
		e, err := multiword.Open("model:" + unit)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []string{"fp16:scale=on", "bf16:scale=off", "tf32:scale=off", "fp16:scale=off"} {
			for _, opt := range []string{",sum=v1,b=32", ",sum=v2,b=64", ",sum=pair,b=64", ",sum=pair,b=0"} {
				sep := lookupAll(t, spec+opt)[0]
				joint := lookupAll(t, spec+opt+",joint=on")[0]
				for _, k := range []int{7, 64, 100, 300} {
					d := distributions[rng.IntN(3)]
					a, b := d.matrix(rng, m*k), d.matrix(rng, k*n)
					cs, cj := make([]float64, m*n), make([]float64, m*n)
					if err := e.Multiply(sep, m, n, k, a, b, cs); err != nil {
						t.Fatal(err)
					}
					if err := e.Multiply(joint, m, n, k, a, b, cj); err != nil {
						t.Fatal(err)
					}
					for x := range cs {
						if math.Float64bits(cs[x]) != math.Float64bits(cj[x]) {
							t.Errorf("%s %s k=%d: C[%d] = %g joint, %g separate", e.Name(), joint.Name, k, x, cj[x], cs[x])
							break
						}
					}
				}
			}
		}
	}
}

// The reference engine runs a joint plan as Plan.FABsumJoint says: for
// each block, for each k-step, every product in plan order into one
// fp32 accumulator (JointProducts: for each product, every k-step),
// then one promotion per block. Written out here for v1 and v2 (no
// scaling, shift 0), the bits must match.
func TestJointSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	const m, n = 2, 3
	f32 := format.Binary32
	r32 := func(x float64) float64 { return f32.Round(x, format.NearestEven) }
	for _, spec := range []string{"triple-bf16:sum=v1,b=32,joint=on", "double-tf32:sum=v2,b=64,joint=on",
		"double-fp16:sum=v2,b=40,joint=on,products=all,order=largest",
		"triple-bf16:sum=v1,b=32,joint=products", "double-tf32:sum=v2,b=64,joint=products",
		"double-fp16:sum=v2,b=40,joint=products,products=all,order=largest"} {
		p := lookupAll(t, spec)[0]
		step := p.JointStep()
		for _, k := range []int{13, 100} {
			a, b := distributions[2].matrix(rng, m*k), distributions[2].matrix(rng, k*n)
			aw := multiword.Split(a, p.Low, p.Words, p.SplitMode, 0, nil)
			bw := multiword.Split(b, p.Low, p.Words, p.SplitMode, 0, nil)
			pairs := p.Pairs
			if pairs == nil {
				pairs = multiword.Triangle(p.Words)
			}
			want := make([]float64, m*n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					acc := 0.0
					for l0 := 0; l0 < k; l0 += p.Block {
						type call struct {
							ks int
							pr multiword.Pair
						}
						var calls []call
						for ks := l0; ks < min(l0+p.Block, k); ks += step {
							for _, pr := range pairs {
								calls = append(calls, call{ks, pr})
							}
						}
						if p.JointOrder == multiword.JointProducts {
							calls = calls[:0]
							for _, pr := range pairs {
								for ks := l0; ks < min(l0+p.Block, k); ks += step {
									calls = append(calls, call{ks, pr})
								}
							}
						}
						d := 0.0
						for _, c := range calls {
							s := d
							for l := c.ks; l < min(c.ks+step, l0+p.Block, k); l++ {
								s += aw[c.pr.I][i*k+l] * bw[c.pr.J][l*n+j]
							}
							d = r32(s)
						}
						if acc += d; p.Sum == bound.FABsumV1 {
							acc = r32(acc)
						}
					}
					want[i*n+j] = r32(acc)
				}
			}
			got := make([]float64, m*n)
			if err := (multiword.Reference{}).Multiply(p, m, n, k, a, b, got); err != nil {
				t.Fatal(err)
			}
			for x := range got {
				if got[x] != want[x] {
					t.Errorf("%s k=%d: C[%d] = %g, want %g", spec, k, x, got[x], want[x])
				}
			}
		}
	}
}

// Check rejects joint plans that cannot share an accumulator, naming the
// plan; the spec key and String show the option.
func TestJointCheck(t *testing.T) {
	ok := multiword.Plan{Name: "j", Low: format.Binary16, Words: 2, Acc: format.Binary32, Out: format.Binary32,
		Sum: bound.FABsumPair, Block: 64, FABsumJoint: true}
	if err := ok.Check(); err != nil {
		t.Fatalf("joint plan: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(p *multiword.Plan)
		want string
	}{
		{"joint-plain", func(p *multiword.Plan) { p.Sum = bound.Plain }, "sum="},
		{"joint-first", func(p *multiword.Plan) { p.FABsumFirstOnly = true }, "first=on"},
		{"joint-shift", func(p *multiword.Plan) { p.WordShift = 11 }, "shift"},
	} {
		p := ok
		p.Name = tc.name
		tc.mod(&p)
		err := p.Check()
		if err == nil || !strings.Contains(err.Error(), `"`+tc.name+`"`) || !strings.Contains(err.Error(), "joint") ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want an error naming the plan, joint and %q", tc.name, err, tc.want)
		}
		if _, err := p.Bound(100, multiword.ReferenceError(&p)); err == nil {
			t.Errorf("%s: Bound accepted the plan", tc.name)
		}
		if err := (multiword.Reference{}).Multiply(p, 1, 1, 1, []float64{1}, []float64{1}, []float64{0}); err == nil {
			t.Errorf("%s: Multiply accepted the plan", tc.name)
		}
	}
	for _, spec := range []string{"double-fp16-fabsum:first=on", "double-fp16-fabsum:shift=u", "double-fp16-fabsum:sum=plain",
		"double-fp16:joint=on", "double-fp16:joint=maybe", "double-fp16:joint=products"} {
		if _, err := multiword.Lookup(spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
	if p := lookupAll(t, "double-fp16-fabsum:first=on,joint=off")[0]; p.FABsumJoint || !p.FABsumFirstOnly {
		t.Errorf("joint=off: %v", p)
	}
	for spec, step := range map[string]int{"double-fp16-fabsum": 16, "triple-bf16-fabsum": 16, "3xtf32-fabsum": 8} {
		p := lookupAll(t, spec)[0]
		if p.JointStep() != step || !p.FABsumJoint || p.FABsumFirstOnly || p.WordShift != 0 || p.Block != 32 ||
			p.Sum != bound.FABsumV2 || !strings.Contains(p.String(), "joint") {
			t.Errorf("%s: step %d, plan %v", spec, p.JointStep(), p)
		}
	}
	for _, v := range multiword.Variants() {
		if strings.HasSuffix(v.Name, "-fabsum") && !strings.Contains(v.Doc, "joint") {
			t.Errorf("%s: doc %q does not say joint", v.Name, v.Doc)
		}
	}
}

// The order by products is the variants' default where the kernels run
// it (blocks within a 32-element stage) and gives way to steps elsewhere
// unless asked for; with at most one k-step per block the two orders are
// the same calls, the same bits; and on H100's truncating adders it loses
// less than the order by k-steps, which is why it is the default.
func TestJointProducts(t *testing.T) {
	for spec, want := range map[string]multiword.JointOrder{
		"3xtf32-fabsum": multiword.JointProducts, "3xtf32-fabsum:b=16": multiword.JointProducts,
		"3xtf32-fabsum:b=64": multiword.JointSteps, "3xtf32-fabsum:b=64,joint=products": multiword.JointProducts,
		"double-fp16-fabsum:joint=steps": multiword.JointSteps, "double-fp16:sum=v2,b=32,joint=on": multiword.JointSteps,
		"double-fp16:sum=v2,b=32,joint=products": multiword.JointProducts,
	} {
		if p := lookupAll(t, spec)[0]; p.JointOrder != want || !p.FABsumJoint {
			t.Errorf("%s: joint %v, order %v, want %v", spec, p.FABsumJoint, p.JointOrder, want)
		}
	}
	bad := lookupAll(t, "3xtf32-fabsum")[0]
	bad.JointOrder = 7
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "joint order") {
		t.Errorf("order 7: Check() = %v", err)
	}

	h100, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(57, 58))
	for _, spec := range []string{"double-fp16-fabsum:b=16", "3xtf32-fabsum:b=8"} {
		steps, prods := lookupAll(t, spec+",joint=steps")[0], lookupAll(t, spec+",joint=products")[0]
		const m, n, k = 3, 4, 77
		a, b := distributions[0].matrix(rng, m*k), distributions[0].matrix(rng, k*n)
		cs, cp := make([]float64, m*n), make([]float64, m*n)
		if err := h100.Multiply(steps, m, n, k, a, b, cs); err != nil {
			t.Fatal(err)
		}
		if err := h100.Multiply(prods, m, n, k, a, b, cp); err != nil {
			t.Fatal(err)
		}
		for x := range cs {
			if math.Float64bits(cs[x]) != math.Float64bits(cp[x]) {
				t.Errorf("%s: C[%d] = %g by products, %g by steps", spec, x, cp[x], cs[x])
			}
		}
	}

	// Mean componentwise error against the exact product on (0,1], where
	// truncation errors add up: by products it measured 0.56× (3xTF32) and
	// 0.73× (double-fp16) of by steps.
	const m, n, k = 16, 16, 2048
	a, b := distributions[0].matrix(rng, m*k), distributions[0].matrix(rng, k*n)
	meanErr := func(p multiword.Plan) float64 {
		c := make([]float64, m*n)
		if err := h100.Multiply(p, m, n, k, a, b, c); err != nil {
			t.Fatal(err)
		}
		var sum float64
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				exact, abs := new(big.Float).SetPrec(200), 0.0
				for l := 0; l < k; l++ {
					exact.Add(exact, new(big.Float).SetPrec(200).Mul(big.NewFloat(a[i*k+l]), big.NewFloat(b[l*n+j])))
					abs += math.Abs(a[i*k+l] * b[l*n+j])
				}
				e, _ := new(big.Float).Sub(exact, big.NewFloat(c[i*n+j])).Float64()
				sum += math.Abs(e) / abs
			}
		}
		return sum / (m * n)
	}
	for _, spec := range []string{"3xtf32-fabsum", "double-fp16-fabsum"} {
		es, ep := meanErr(lookupAll(t, spec+":joint=steps")[0]), meanErr(lookupAll(t, spec+":joint=products")[0])
		t.Logf("%s: mean error by steps %.3g, by products %.3g", spec, es, ep)
		if !(ep < 0.85*es) {
			t.Errorf("%s: mean error by products %.3g, by steps %.3g: want below 0.85×", spec, ep, es)
		}
	}
}
