package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mwmm/mwmm/gpu/dist"
	"github.com/mwmm/mwmm/internal/budget"
	"github.com/mwmm/mwmm/internal/npy"
	"github.com/mwmm/mwmm/multiword"
)

var gemmCmd = &command{
	name:    "gemm",
	summary: "multiply matrices in multiword arithmetic (double-fp16, triple-bf16, 3xTF32, fp8)",
	usage: "mwmm gemm [--a A.npy --b B.npy | --size M,K,N [--dist D]] [--out C.npy] [--variant V]" +
		" [--fabsum v1|v2|pair [--block B]] [--engine E | --unit U] [--check]\n" +
		"mwmm gemm --variants",
	help: `
Gemm computes C = A·B with a multiword algorithm (Algorithm 2.1 of Fasi,
Higham, Lopez, Mary and Mikaitis, "Matrix multiplication in multiword
arithmetic: error analysis and application to GPU tensor cores", SIAM J.
Sci. Comput. 45(1), 2023, https://hal.science/hal-03543925): A and B are split into p words of a low
precision (A ≈ A_1 + ... + A_p, each word the rounded remainder of the
ones before), the products A_i·B_j with i+j ≤ p+1 are computed by a block
FMA that accumulates in fp32, smallest first, and summed. Two fp16
words and three products give fp32's error bound n·2^-24 at tensor-core
speed; on hardware that rounds toward zero inside the block FMA (every NVIDIA
tensor core) the error reaches that bound for data of one sign, and FABsum
(--fabsum) cuts it to (b + n/b)·2^-24 (v1: block sums added in fp32),
b·2^-24 + (n/b)·2^-53 (v2: in fp64) or b·2^-24 + (n/b)²·2^-48 (pair:
added into an fp32 pair (hi, lo) by Knuth's TwoSum, nearly v2's accuracy
at fp32 speed); --first applies FABsum to A_1·B_1 only (Algorithm 4.4),
which is as accurate for n up to about 4·10^6. The -fabsum variants are
joint (the option joint=on): the P products of a block share one
accumulator and are promoted once per block, as a GPU kernel with one
accumulator per output computes them; the bound is then FABsum's with
b → P·b. joint=products (their default) runs each product over the block
in turn, smallest first, and joint=steps interleaves them k-step by k-step:
the same bound, but the order by products loses less on tensor cores,
whose adders truncate. joint needs shift=0 and excludes first=on.

The fp8 variants (e4m3, e5m2, double-/triple-/quadruple-) use the narrow-
range algorithm of Mary and Mikaitis: rows of A and columns of B are scaled
by powers of two so that their largest entry is near θ = min(f_max,
sqrt(F_max/n)) — nothing overflows the words or the accumulator — and word i
is stored ×2^(p·i) so that low words do not underflow. --scale adds this
scaling to any variant.

A and B are NumPy .npy files of float32 or float64 (1-D arrays are
columns); C is written as float32 when the variant's output is fp32 or
narrower and float64 otherwise. Without --a and --b, gemm multiplies random
matrices of --size drawn from --dist. --check compares C with the float64
product and prints the componentwise error max |C−Ĉ|/(|A||B|) (eq. 3.1),
the normwise error ‖C−Ĉ‖_F/‖C‖_F and the a-priori componentwise bound of
the plan on this engine.

Engines: reference (float64 products rounded to the accumulator: fast),
model:<unit> (every block FMA through the bit-exact model of 'mwmm mma',
e.g. model:v100, model:a100, model:ieee: slow, keep m and n small), and gpu
(an NVIDIA GPU, or gpu:I for device I: the words made on the device and each
product a cuBLASLt call with fp16/bf16/tf32/fp8 inputs and fp32 accumulation;
see 'mwmm info'). On gpu, FABsum plans (--fabsum, the -fabsum variants)
run instead on a fused kernel, which splits, multiplies and adds the
block sums in one pass: for fp16, bf16 or tf32 words (up to three), b a
multiple of the mma k-step, and A and B of fp32 values (float32 .npy
files; --size draws float64). On Hopper that is the wgmma kernel for
one-word and joint plans with b a multiple of 32 (b = 32 by products),
elsewhere the mma.sync kernel (by products: b dividing 32). Other plans go
through cuBLASLt.

A variant takes options after a colon, as in double-fp16:sum=pair,b=64 or
double-fp16:scale=on,sum=pair,b=64,joint=on (see the multiword package);
the flags set the common ones.`,
	examples: `
mwmm gemm --size 16,4096,16 --variant double-fp16 --engine model:v100 --check
mwmm gemm --a A.npy --b B.npy --out C.npy --variant triple-bf16
mwmm gemm --size 16,4096,16 --fabsum v2 -b 256 --engine model:v100 --check
# A.npy and B.npy of float32: the fused kernel, block sums in a TwoSum pair
mwmm gemm --a A.npy --b B.npy --variant double-fp16 --fabsum pair -b 64 --engine gpu --check
mwmm gemm --size 8,1000,8 --dist logu --variant double-e4m3 --check
mwmm gemm --variants`,
	brief: `
Input and output:
  a         A, the m×k left factor, a .npy file
  b         B, the k×n right factor, a .npy file (an integer: --block)
  size      M,K,N of random A and B, without --a and --b
  dist      random entries: uniform (default), centered, normal, logu:E
  seed      seed of the random matrices
  out       write C to this .npy file (- for standard output)
  check     print the error against the float64 product and the bound
  json      print the summary as JSON
  force     run sizes estimated to take over an hour or more memory than free
The algorithm:
  variant   double-fp16 (default) or another variant (--variants), :key=value
  variants  list the named variants and exit
  fabsum    FABsum: v1 (block sums in fp32), v2 (in fp64) or pair (TwoSum)
  block     FABsum block size: products per block sum (0: one block)
  group     with --fabsum v2 or pair: add each G block sums in fp32 first
  first     FABsum for A_1·B_1 only (Algorithm 4.4)
  all       form all p² products, not only those with i+j ≤ p+1
  scale     narrow-range scaling of rows and columns, words ×2^(p·i)
Where:
  engine    reference (default), model:UNIT (e.g. model:a100) or gpu
  unit      the same as --engine model:UNIT (v100, a100:accmode=rne, ...)
  gpus      with --engine gpu: on N GPUs or a PxQ grid (FABsum, fp32 values)
`,
	flags: func() *flag.FlagSet { fs, _ := gemmFlags(); return fs },
	run:   runGemm,
}

type gemmOptions struct {
	a, b, out, variant, fabsum, engine, size, dist string
	unit, gpus                                     string
	block, group                                   int
	first, all, scale, check, json, variants       bool
	blockSet, force                                bool
	bBlock                                         string // -b's value where it was read as the block size
	seed                                           uint64
}

func gemmFlags() (*flag.FlagSet, *gemmOptions) {
	o := &gemmOptions{block: 256}
	fs := newFlagSet("gemm")
	fs.StringVar(&o.a, "a", "", "`A.npy`, the m×k left factor")
	fs.Var(bOrBlock{o}, "b", "`B.npy`, the k×n right factor; an integer instead is --block (-b 256)")
	fs.Var(blockFlag{o}, "block", "FABsum block `SIZE`: products per block sum, 0 for one block of the whole inner dimension (also -b SIZE)")
	fs.IntVar(&o.group, "group", 0, "with --fabsum v2 or pair: add each `G` block sums in fp32 before the wider addition (the variants' group=G)")
	fs.BoolVar(&o.force, "force", false, "run sizes estimated to take over an hour or more memory than is available")
	fs.StringVar(&o.out, "out", "", "write C to this `.npy` file")
	fs.StringVar(&o.variant, "variant", "double-fp16", "the multiword `VARIANT` (--variants lists them), with optional :key=value options")
	fs.StringVar(&o.fabsum, "fabsum", "", "FABsum `VERSION`: v1 (block sums in the accumulator, fp32), v2 (in fp64) or pair (in an fp32 TwoSum pair)")
	fs.BoolVar(&o.first, "first", false, "FABsum for A_1·B_1 only (Algorithm 4.4)")
	fs.BoolVar(&o.all, "all", false, "form all p² products, not only those with i+j ≤ p+1")
	fs.BoolVar(&o.scale, "scale", false, "narrow-range scaling of rows and columns, and words ×2^(p·i)")
	fs.StringVar(&o.engine, "engine", "reference", "the `ENGINE`: reference, model:UNIT (e.g. model:a100) or gpu (FABsum plans on its fused kernel)")
	fs.StringVar(&o.gpus, "gpus", "", "with --engine gpu: multiply on `N` GPUs (the squarest grid) or a PxQ grid of them (NCCL; FABsum plans, fp32 values)")
	fs.StringVar(&o.unit, "unit", "", "the same as --engine model:`UNIT` (a unit as 'mwmm mma' names it: v100, a100:accmode=rne, ...)")
	fs.StringVar(&o.size, "size", "16,1024,16", "`M,K,N` of random A and B when --a and --b are not given")
	fs.StringVar(&o.dist, "dist", "uniform", "random entries, `DIST`: uniform (0,1], centered (-0.5,0.5], normal, or logu:E (magnitudes log-uniform in [1e-E,1eE], random signs; logu is logu:10)")
	fs.Uint64Var(&o.seed, "seed", 1, "`SEED` of the random matrices")
	fs.BoolVar(&o.check, "check", false, "print the error against the float64 product and the a-priori bound")
	fs.BoolVar(&o.json, "json", false, "print the summary as JSON")
	fs.BoolVar(&o.variants, "variants", false, "list the named variants and exit")
	return fs, o
}

func runGemm(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := gemmFlags()
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if o.variants {
		return writeVariants(stdout)
	}
	plan, err := gemmPlan(fs, o)
	if err != nil {
		return err
	}
	eng, err := gemmEngine(fs, o, &plan)
	if err != nil {
		return err
	}
	// A path that cannot be written fails now, not after the product.
	if err := checkOutputs(output{"out", o.out}); err != nil {
		return err
	}
	a, b, err := gemmInputs(fs, o)
	if err != nil {
		return err
	}
	if a.Cols != b.Rows {
		return fmt.Errorf("A is %d×%d and B is %d×%d: A's columns and B's rows differ", a.Rows, a.Cols, b.Rows, b.Cols)
	}
	return gemmProduct(o, eng, plan, a, b, stdout, stderr)
}

// gemmEngine opens --engine (or --unit's model, or --gpus' engine). A
// model unit that cannot run the plan is a bad command line (exit 2),
// found before the inputs are read or drawn.
func gemmEngine(fs *flag.FlagSet, o *gemmOptions, plan *multiword.Plan) (multiword.Engine, error) {
	if flagSet(fs, "unit") {
		if flagSet(fs, "engine") {
			return nil, usagef("--unit %s is --engine model:%s: give one of --unit and --engine", o.unit, o.unit)
		}
		o.engine = "model:" + o.unit
	}
	if err := gpusEngine(fs, o); err != nil {
		return nil, err
	}
	eng, err := multiword.Open(o.engine)
	if err != nil {
		return nil, usage(err)
	}
	if me, ok := eng.(*multiword.Model); ok {
		if _, err := me.Unit(plan); err != nil {
			return nil, usage(err)
		}
	}
	return eng, nil
}

// gemmProduct multiplies A by B, writes C (--out), measures its error
// (--check) and reports.
func gemmProduct(o *gemmOptions, eng multiword.Engine, plan multiword.Plan, a, b npy.Matrix, stdout, stderr io.Writer) error {
	m, k, n := a.Rows, a.Cols, b.Cols
	if strings.HasPrefix(o.engine, "gpus:") && roundToFloat32(a.Data)+roundToFloat32(b.Data) > 0 {
		fmt.Fprintln(stderr, "mwmm gemm: note: --gpus multiplies fp32 values: A and B were rounded to fp32 (--check measures against their product)")
	}
	c := make([]float64, m*n)
	start := time.Now()
	if err := multiplyRows(eng, plan, m, n, k, a.Data, b.Data, c, stderr); err != nil {
		return err
	}
	elapsed := time.Since(start)

	sum := gemmSummary{Variant: plan.Name, Plan: plan.String(), Engine: eng.Name(), M: m, K: k, N: n,
		Products: plan.Products(), Seconds: elapsed.Seconds()}
	outErr := writeC(o.out, plan, m, n, c, stdout)
	if o.out != "" && outErr == nil {
		sum.Out = o.out
	}
	sum.NonFinite = countNonFinite(c)
	inputsFinite := countNonFinite(a.Data) == 0 && countNonFinite(b.Data) == 0
	if o.check {
		t := time.Now()
		sum.Check = gemmCheck(eng, plan, m, n, k, a.Data, b.Data, c)
		sum.Check.Seconds = time.Since(t).Seconds()
	}
	report := reportTo(stdout, stderr, output{"out", o.out})
	var err error
	if o.json {
		err = writeJSON(report, sum)
	} else {
		err = writeGemmReport(report, sum)
	}
	if err != nil {
		return err
	}
	gemmWarnings(stderr, o, plan, m, n, k, a.Data, b.Data, sum.NonFinite, inputsFinite) // stderr: the JSON stays clean
	// A failed write comes after the report: only C is lost.
	return outErr
}

// writeGemmReport prints gemm's summary as a table.
func writeGemmReport(report io.Writer, sum gemmSummary) error {
	w := tabwriter.NewWriter(report, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "plan\t%s\n", sum.Plan)
	fmt.Fprintf(w, "engine\t%s\n", sum.Engine)
	fmt.Fprintf(w, "shape\t%d×%d times %d×%d, %s of words\n", sum.M, sum.K, sum.K, sum.N, count(sum.Products, "product"))
	fmt.Fprintf(w, "time\t%.3g s\n", sum.Seconds)
	if sum.Out != "" {
		fmt.Fprintf(w, "wrote\t%s\n", sum.Out)
	}
	if ch := sum.Check; ch != nil {
		fmt.Fprintf(w, "componentwise error\t%.3g\tmax |C−Ĉ|/(|A||B|), eq. (3.1)\n", ch.Componentwise)
		fmt.Fprintf(w, "normwise error\t%.3g\t‖C−Ĉ‖_F/‖C‖_F\n", ch.Normwise)
		fmt.Fprintf(w, "check time\t%.3g s\tthe float64 product and the errors\n", ch.Seconds)
		if ch.Bound > 0 {
			fmt.Fprintf(w, "a-priori bound\t%.3g\tcomponentwise, this plan on this engine's unit, if nothing underflows\n", ch.Bound)
		}
	}
	return w.Flush()
}

// roundToFloat32 rounds x to float32 values in place and returns how many
// changed.
func roundToFloat32(x []float64) int {
	changed := 0
	for i, v := range x {
		if r := float64(float32(v)); r != v && !math.IsNaN(v) {
			x[i], changed = r, changed+1
		}
	}
	return changed
}

// gpusEngine turns --engine gpu --gpus N|PxQ into the engine gpus:N:PxQ.
func gpusEngine(fs *flag.FlagSet, o *gemmOptions) error {
	if !flagSet(fs, "gpus") {
		return nil
	}
	if o.engine != "gpu" {
		return usagef("--gpus goes with --engine gpu, not %s", o.engine)
	}
	g, err := dist.ParseGPUs(o.gpus)
	if err != nil {
		return usage(err)
	}
	o.engine = fmt.Sprintf("gpus:%d:%v", g.Size(), g)
	return nil
}

// writeC writes C to path (if any) as float32 when the plan's output fits
// it, else float64. An interrupt stops the write and removes the partial
// file; the product before it was not interruptible and left no file.
func writeC(path string, plan multiword.Plan, m, n int, c []float64, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	dtype := "float64"
	if plan.Out.Precision() <= 24 && plan.Out.Emax() <= 127 {
		dtype = "float32"
	}
	ctx, stop := signalContext()
	defer stop()
	return writeArray(ctx, path, stdout, dtype, []int{m, n}, c)
}

// gemmWarnings says on stderr when C cannot be as accurate as the plan
// promises because the inputs leave the words' range: overflow (Inf or NaN
// in C) or underflow (entries the words represent worse than the split's
// bound, or not at all). The hint fits the plan: --scale where it is off.
func gemmWarnings(stderr io.Writer, o *gemmOptions, plan multiword.Plan, m, n, k int, a, b []float64, nonFinite int, inputsFinite bool) {
	hint := " (try --scale)"
	if plan.Scale {
		// Scaling to θ keeps entries within the words and sums within the
		// accumulator unless θ was set too large.
		hint = fmt.Sprintf(" with scaling to θ = %g: θ ≤ %.6g (%s's largest) and n·θ² ≤ %.4g (%s's) avoid it; leave theta= out for the largest θ that does",
			plan.ScaleTarget(k), plan.Low.MaxFinite(), plan.Low.Name(), plan.Acc.MaxFinite(), plan.Acc.Name())
	}
	if !inputsFinite {
		// NaN and ±Inf propagate: C's entries in their rows and columns
		// are NaN or infinite whatever the plan.
		fmt.Fprintf(stderr, "mwmm gemm: warning: %s of A and %s of B are NaN or infinite: C's entries in their rows and columns are too\n",
			count(countNonFinite(a), "entry"), count(countNonFinite(b), "entry"))
	}
	if nonFinite > 0 && inputsFinite {
		fmt.Fprintf(stderr, "mwmm gemm: warning: %d entries of C are Inf or NaN although A and B are finite: entries overflow %s%s\n",
			nonFinite, plan.Low.Name(), hint)
	}
	hint = " (try --scale)"
	if plan.Scale {
		hint = " even with scaling: the entries of a row of A or a column of B span a wider range than the words hold"
	}
	la, lb := plan.UnderflowRows(a, m, k), plan.UnderflowCols(b, k, n)
	if la+lb > 0 {
		fmt.Fprintf(stderr, "mwmm gemm: warning: entries in %d of %s of A and %d of %s of B underflow %s: "+
			"they lose accuracy or vanish (the smallest normal of %s is %g), and C's error in those rows and columns can reach 100%%%s\n",
			la, count(m, "row"), lb, count(n, "column"), plural(plan.Words, plan.Low.Name()+" word"), plan.Low.Name(), plan.Low.MinNormal(), hint)
	}
}

type gemmSummary struct {
	Variant   string     `json:"variant"`
	Plan      string     `json:"plan"`
	Engine    string     `json:"engine"`
	M         int        `json:"m"`
	K         int        `json:"k"`
	N         int        `json:"n"`
	Products  int        `json:"products"`
	Seconds   float64    `json:"seconds"`
	Out       string     `json:"out,omitempty"`
	NonFinite int        `json:"nonfinite"`
	Check     *gemmError `json:"check,omitempty"`
}

type gemmError struct {
	Componentwise float64 `json:"componentwise"`
	Normwise      float64 `json:"normwise"`
	Bound         float64 `json:"bound,omitempty"`
	Seconds       float64 `json:"seconds"` // of the check
}

// bOrBlock is the flag -b/--b, which the synopsis gives two
// meanings: --b B.npy names B's file, -b 256 sets the FABsum block size.
// An integer is a block size (name a file "256" as ./256).
type bOrBlock struct{ o *gemmOptions }

func (f bOrBlock) String() string {
	if f.o == nil {
		return ""
	}
	return f.o.b
}

func (f bOrBlock) Set(s string) error {
	if _, err := strconv.Atoi(s); err == nil {
		if f.o.blockSet {
			return fmt.Errorf("the FABsum block size is given twice (-b and --block are one flag): give it once")
		}
		f.o.bBlock = s
		return blockFlag(f).Set(s)
	}
	if f.o.b != "" {
		return fmt.Errorf("B's file is given twice: give it once")
	}
	f.o.b = s
	return nil
}

// -b may be given twice: once for B's file, once for the block size.
func (bOrBlock) repeatable() {}

// blockFlag is --block, the FABsum block size (0: the whole inner
// dimension, as the variants' b=0).
type blockFlag struct{ o *gemmOptions }

func (f blockFlag) String() string {
	if f.o == nil {
		return ""
	}
	return strconv.Itoa(f.o.block)
}

func (f blockFlag) Set(s string) error {
	if f.o.blockSet {
		return fmt.Errorf("the FABsum block size is given twice (-b and --block are one flag): give it once")
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return fmt.Errorf("the FABsum block size is an integer ≥ 0 (0: one block of the whole inner dimension), not %q", s)
	}
	f.o.block, f.o.blockSet = v, true
	return nil
}

// gemmPlan is the variant with the flags' options.
func gemmPlan(fs *flag.FlagSet, o *gemmOptions) (multiword.Plan, error) {
	spec := o.variant
	var opts []string
	if o.fabsum != "" {
		opts = append(opts, "sum="+o.fabsum)
		// The flag's default does not override a b= in --variant.
		if o.blockSet || !specHas(spec, "b", "block") {
			opts = append(opts, "b="+strconv.Itoa(o.block))
		}
		if o.group > 0 {
			opts = append(opts, "group="+strconv.Itoa(o.group))
		}
	} else if o.blockSet {
		return multiword.Plan{}, usagef("--block (-b SIZE) needs --fabsum v1, v2 or pair")
	} else if flagSet(fs, "group") {
		return multiword.Plan{}, usagef("--group needs --fabsum v2 or pair")
	}
	if o.first {
		if o.fabsum == "" {
			return multiword.Plan{}, usagef("--first needs --fabsum v1, v2 or pair")
		}
		opts = append(opts, "first=on")
	}
	if o.all {
		opts = append(opts, "products=all")
	}
	if o.scale {
		opts = append(opts, "scale=on", "shift=u")
	}
	if len(opts) > 0 {
		sep := ":"
		if strings.Contains(spec, ":") {
			sep = ","
		}
		spec += sep + strings.Join(opts, ",")
	}
	p, err := multiword.Lookup(spec)
	if err != nil {
		return multiword.Plan{}, usage(err)
	}
	return p, nil
}

// specHas says whether the variant spec sets one of keys after its colon.
func specHas(spec string, keys ...string) bool {
	_, opts, _ := strings.Cut(spec, ":")
	for _, kv := range strings.Split(opts, ",") {
		k, _, _ := strings.Cut(kv, "=")
		for _, key := range keys {
			if strings.EqualFold(strings.TrimSpace(k), key) {
				return true
			}
		}
	}
	return false
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// gemmInputs reads A and B, or draws them.
func gemmInputs(fs *flag.FlagSet, o *gemmOptions) (a, b npy.Matrix, err error) {
	switch {
	case o.a != "" && o.b != "":
		for _, f := range []string{"size", "dist", "seed"} {
			if flagSet(fs, f) {
				return a, b, usagef("--%s draws random matrices: it does not go with --a and --b", f)
			}
		}
		if a, err = npy.ReadFile(o.a); err != nil {
			return a, b, err
		}
		b, err = npy.ReadFile(o.b)
		return a, b, err
	case o.a != "" || o.b != "":
		if o.bBlock != "" {
			return a, b, usagef("give both --a and --b, or neither for random matrices (-b %s is the FABsum block size; write a file named %s as ./%s)", o.bBlock, o.bBlock, o.bBlock)
		}
		if o.a == "" {
			return a, b, usagef("--b %s names B's file: give A's with --a (a FABsum block size is an integer: -b 256)", o.b)
		}
		return a, b, usagef("give both --a and --b, or neither for random matrices")
	}
	var dims [3]int
	parts := strings.Split(o.size, ",")
	if len(parts) != 3 {
		return a, b, usagef("--size %q: want M,K,N", o.size)
	}
	for i, s := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return a, b, usagef("--size %q: %q is not a positive integer", o.size, s)
		}
		dims[i] = v
	}
	for _, d := range [][]int{dims[:2], dims[1:], {dims[0], dims[2]}} {
		e, err := budget.Entries(d...)
		if err != nil {
			return a, b, usagef("--size %q: %v", o.size, err)
		}
		if e > 1<<28 {
			return a, b, usagef("--size %q: at most 2^28 entries per matrix", o.size)
		}
	}
	dist, err := gemmDist(o.dist)
	if err != nil {
		return a, b, usagef("--dist: %v", err)
	}
	if err := checkCost(o, dims[0], dims[1], dims[2]); err != nil {
		return a, b, err
	}
	rng := rand.New(rand.NewPCG(o.seed, 0x67656d6d))
	fill := func(r, c int) npy.Matrix {
		m := npy.Matrix{Rows: r, Cols: c, Data: make([]float64, r*c), Dtype: "float64"}
		dist.Fill(rng, m.Data)
		return m
	}
	return fill(dims[0], dims[1]), fill(dims[1], dims[2]), nil
}

// gemmCheck measures C against the float64 product.
func gemmCheck(e multiword.Engine, p multiword.Plan, m, n, k int, a, b, c []float64) *gemmError {
	r := &gemmError{}
	r.Componentwise, r.Normwise = multiword.Errors(m, n, k, a, b, c)
	if em, ok := e.(multiword.ErrorModel); ok {
		if ue, err := em.UnitError(&p); err == nil {
			if b, err := p.Bound(k, ue); err == nil {
				r.Bound = b.Total
			}
		}
	}
	return r
}

func countNonFinite(v []float64) int {
	n := 0
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			n++
		}
	}
	return n
}

func writeVariants(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tWORDS\tPRODUCTS\tDESCRIPTION")
	for _, v := range multiword.Variants() {
		fmt.Fprintf(tw, "%s\t%d×%s\t%d\t%s\n", v.Name, v.Plan.Words, v.Plan.Low.Name(), v.Plan.Products(), v.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nOptions after a colon change a variant: sum (plain|v1|v2|pair), b, first, joint (on: the products\n"+
		"of a block share one accumulator; needs shift=0, not first=on), products (triangle|all), order (smallest|largest),\n"+
		"words, low, acc, out, split (rounding mode), seed, scale, theta, shift.\n"+
		"With --engine gpu, FABsum plans (sum=v1|v2|pair) run on the fused kernel where it can, the others through cuBLASLt.\n"+
		"Examples: --variant double-fp16:sum=pair,b=64,first=on, --variant double-fp16:scale=on,sum=pair,b=64,joint=on")
	return err
}
