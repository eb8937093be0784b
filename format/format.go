package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Specials says which codes of a format are not finite numbers, and so what
// overflow and NaN become.
type Specials uint8

const (
	// IEEE: the all-ones exponent field holds ±Inf and NaNs; signed zeros.
	// Overflow gives ±Inf.
	IEEE Specials = iota
	// NaNOnly: no Inf; only S.1…1.1…1 is NaN, the rest of the top binade is
	// finite (OCP E4M3). Overflow gives NaN unless saturating.
	NaNOnly
	// NoSpecials: every code is a finite number (OCP MX FP6, FP4). Overflow
	// and ±Inf always saturate to ±MaxFinite; NaN has no encoding.
	NoSpecials
	// P3109Extended: one NaN (the code 100…0), ±Inf at the two largest
	// magnitudes' code 011…1 and 111…1, no negative zero. Overflow gives ±Inf.
	P3109Extended
	// P3109Finite: one NaN, no Inf, no negative zero; the codes that are ±Inf
	// in the extended variant are finite. Overflow gives NaN unless saturating.
	P3109Finite
	// Unsigned: no sign, no zero, no Inf; code c is 2^(Emin+c) and the
	// all-ones code is the one NaN (OCP MX's E8M0 scale, ml_dtypes'
	// float8_e8m0fnu). Exponent-only formats (P = 1) without subnormals.
	// Zero, negative values and ±Inf have no code: they give NaN, or with
	// saturation 2^Emin (zero and negatives) and MaxFinite (+Inf). Values
	// in (0, 2^Emin) give 2^Emin in every mode, there being no zero to
	// round to; overflow follows IEEE's rule (NaN, or MaxFinite for the
	// directed modes toward zero and with saturation).
	Unsigned
)

var specialsNames = []string{IEEE: "ieee", NaNOnly: "nan", NoSpecials: "none", P3109Extended: "p3109-extended", P3109Finite: "p3109-finite", Unsigned: "unsigned"}

func (s Specials) String() string {
	if int(s) < len(specialsNames) {
		return specialsNames[s]
	}
	return "Specials(" + strconv.Itoa(int(s)) + ")"
}

// HasInf reports whether ±Inf are values of the format.
func (s Specials) HasInf() bool { return s == IEEE || s == P3109Extended }

// HasNaN reports whether the format encodes NaN.
func (s Specials) HasNaN() bool { return s != NoSpecials }

// HasNegativeZero reports whether -0 is distinct from +0.
func (s Specials) HasNegativeZero() bool { return s == IEEE || s == NaNOnly || s == NoSpecials }

// HasZero reports whether zero is a value of the format.
func (s Specials) HasZero() bool { return s != Unsigned }

// Spec describes a floating-point format by its parameters. Values are
// ±m·2^(e-P+1) with integer significand m < 2^P and Emin ≤ e ≤ Emax (m ≥ 2^(P-1)
// when normal); with subnormals, m may be below 2^(P-1) at e = Emin.
type Spec struct {
	Name       string
	P          int // precision in bits, the implicit bit included (1..53)
	Emin, Emax int // exponents of the smallest and largest binade
	Subnormals bool
	Specials   Specials
}

// Format is a floating-point format with its overflow and subnormal
// behaviour. The zero value is not usable: use a predefined format, New or
// Parse. Formats are small values; copy them freely.
type Format struct {
	name       string
	bits       int // storage width; 0 when no encoding exists
	p          int
	emin, emax int
	subnormals bool
	saturate   bool
	specials   Specials

	baseSubnormals bool // as constructed; Name marks a change with +ftz
	maxFinite      float64

	// Derived for the fast path of Round: float64 bit patterns and masks.
	shift        uint   // 53-p: float64 fraction bits dropped
	dropMask     uint64 // 1<<shift - 1
	halfMinusOne uint64 // 1<<(shift-1) - 1, or 0 when shift is 0
	// Nearest-even adds tieBase + (a>>shift)&tieBit: the kept last bit
	// breaks ties. With p = 1 that bit is the implicit one, always odd, so
	// ties go up; with p = 53 nothing is dropped.
	tieBase, tieBit uint64
	// ToOdd sets oddBit, the kept last bit, when inexact; with p = 1 that is
	// the implicit bit, always set, so truncation is already odd.
	oddBit     uint64
	minNormal  uint64 // bits of 2^emin
	normalSpan uint64 // bits(maxFinite) - bits(2^emin)
	maxBits    uint64 // bits(maxFinite)
}

// New builds a format from its parameters. It has an encoding (Bits > 0) when
// the exponent range fills an exponent field exactly: Emin = 1-bias and the
// top field value 2^w-1 is Emax (or Emax+1 for IEEE, where it is reserved).
func New(s Spec) (Format, error) {
	// Named before the checks: their messages name the format.
	if s.Name == "" {
		s.Name = fmt.Sprintf("custom:p=%d,emin=%d,emax=%d", s.P, s.Emin, s.Emax)
		if !s.Subnormals {
			s.Name += ",subnormals=off"
		}
		if s.Specials != IEEE {
			s.Name += ",specials=" + s.Specials.String()
		}
	}
	switch {
	case s.P < 1 || s.P > 53:
		return Format{}, fmt.Errorf("format %s: precision p=%d outside 1..53", s.Name, s.P)
	case s.Emin > s.Emax:
		return Format{}, fmt.Errorf("format %s: emin=%d above emax=%d", s.Name, s.Emin, s.Emax)
	case s.Emin < -1022 || s.Emax > 1023:
		return Format{}, fmt.Errorf("format %s: exponent range [%d, %d] not inside fp64's [-1022, 1023]", s.Name, s.Emin, s.Emax)
	case int(s.Specials) >= len(specialsNames):
		return Format{}, fmt.Errorf("format %s: unknown specials policy %d", s.Name, s.Specials)
	case s.Specials == Unsigned && (s.P != 1 || s.Subnormals):
		return Format{}, fmt.Errorf("format %s: unsigned formats here have only exponents: p=1 and subnormals=off", s.Name)
	}
	f := Format{name: s.Name, p: s.P, emin: s.Emin, emax: s.Emax, subnormals: s.Subnormals, baseSubnormals: s.Subnormals, specials: s.Specials}
	fields := s.Emax - s.Emin + 2 // exponent field values 0 (subnormal) .. top
	if s.Specials == IEEE {
		fields++
	}
	// IEEE and NaNOnly need a fraction bit to tell NaN from Inf or max.
	needsFraction := s.Specials == IEEE || s.Specials == NaNOnly
	if w := log2Exact(fields); w > 0 && 1+w+s.P-1 <= 64 && (s.P > 1 || !needsFraction) {
		f.bits = 1 + w + s.P - 1
	}
	if s.Specials == Unsigned && f.bits > 0 {
		f.bits-- // no sign bit: 2^Emin .. 2^Emax and the NaN fill 2^w codes
	}
	f.maxFinite = math.Ldexp(2-math.Ldexp(1, 1-s.P), s.Emax)
	if f.bits > 0 && s.Specials != Unsigned {
		f.maxFinite = f.decodeMagnitude(f.largestFiniteCode())
	} else if s.Specials == NaNOnly || s.Specials == P3109Extended {
		// Without an encoding, the special codes still take the top grid point.
		f.maxFinite = math.Ldexp(2-math.Ldexp(1, 2-s.P), s.Emax)
	}
	if !(f.maxFinite >= f.MinNormal()) {
		return Format{}, fmt.Errorf("format %s: no finite normal numbers", s.Name)
	}
	f.derive()
	return f, nil
}

func (f *Format) derive() {
	f.shift = uint(53 - f.p)
	f.dropMask = 1<<f.shift - 1
	switch {
	case f.p == 1:
		f.halfMinusOne = 1<<(f.shift-1) - 1
		f.tieBase = f.halfMinusOne + 1
	case f.shift > 0:
		f.halfMinusOne = 1<<(f.shift-1) - 1
		f.tieBase, f.tieBit = f.halfMinusOne, 1
		f.oddBit = f.dropMask + 1
	}
	f.minNormal = math.Float64bits(math.Ldexp(1, f.emin))
	f.maxBits = math.Float64bits(f.maxFinite)
	f.normalSpan = f.maxBits - f.minNormal
}

// log2Exact returns w when n = 2^w, else 0.
func log2Exact(n int) int {
	for w := 1; w < 63; w++ {
		if 1<<w == n {
			return w
		}
	}
	return 0
}

func mustNew(s Spec) Format {
	f, err := New(s)
	if err != nil {
		panic(err)
	}
	return f
}

// P3109 returns the IEEE P3109 signed binary format with k bits and
// precision p (1 ≤ p < k ≤ 16): exponent bias 2^(k-p-1), one larger than
// IEEE's; subnormals (none when p = 1); one NaN; no negative zero; ±Inf only
// when extended.
func P3109(k, p int, extended bool) (Format, error) {
	if k < 2 || k > 16 || p < 1 || p >= k {
		return Format{}, fmt.Errorf("format: P3109 binary format K%dP%d needs 1 ≤ P < K ≤ 16", k, p)
	}
	bias := 1 << (k - p - 1)
	s := Spec{Name: fmt.Sprintf("p3109-k%dp%d", k, p), P: p, Emin: 1 - bias, Emax: 1<<(k-p) - 1 - bias, Subnormals: true, Specials: P3109Extended}
	if !extended {
		s.Name += "-finite"
		s.Specials = P3109Finite
	}
	return New(s)
}

func mustP3109(k, p int, extended bool) Format {
	f, err := P3109(k, p, extended)
	if err != nil {
		panic(err)
	}
	return f
}

// The predefined formats.
var (
	Binary64 = mustNew(Spec{Name: "fp64", P: 53, Emin: -1022, Emax: 1023, Subnormals: true})
	Binary32 = mustNew(Spec{Name: "fp32", P: 24, Emin: -126, Emax: 127, Subnormals: true})
	Binary16 = mustNew(Spec{Name: "fp16", P: 11, Emin: -14, Emax: 15, Subnormals: true})
	BFloat16 = mustNew(Spec{Name: "bf16", P: 8, Emin: -126, Emax: 127, Subnormals: true})
	TF32     = mustNew(Spec{Name: "tf32", P: 11, Emin: -126, Emax: 127, Subnormals: true})

	// OCP 8-bit floating point (OFP8) and the OCP MX element types.
	E4M3 = mustNew(Spec{Name: "e4m3", P: 4, Emin: -6, Emax: 8, Subnormals: true, Specials: NaNOnly})
	E5M2 = mustNew(Spec{Name: "e5m2", P: 3, Emin: -14, Emax: 15, Subnormals: true})
	E2M3 = mustNew(Spec{Name: "e2m3", P: 4, Emin: 0, Emax: 2, Subnormals: true, Specials: NoSpecials})
	E3M2 = mustNew(Spec{Name: "e3m2", P: 3, Emin: -2, Emax: 4, Subnormals: true, Specials: NoSpecials})
	E2M1 = mustNew(Spec{Name: "e2m1", P: 2, Emin: 0, Emax: 2, Subnormals: true, Specials: NoSpecials})
	// E8M0 is the OCP MX scale format: 2^-127 … 2^127 and NaN in 8 bits.
	E8M0 = mustNew(Spec{Name: "e8m0", P: 1, Emin: -127, Emax: 127, Specials: Unsigned})

	// IEEE P3109 8-bit formats, extended (with ±Inf) and finite.
	P3109K8P3       = mustP3109(8, 3, true)
	P3109K8P4       = mustP3109(8, 4, true)
	P3109K8P5       = mustP3109(8, 5, true)
	P3109K8P3Finite = mustP3109(8, 3, false)
	P3109K8P4Finite = mustP3109(8, 4, false)
	P3109K8P5Finite = mustP3109(8, 5, false)
)

// Builtin lists the predefined formats, widest first.
func Builtin() []Format {
	return []Format{Binary64, Binary32, TF32, Binary16, BFloat16, E5M2, E4M3, E3M2, E2M3, E2M1, E8M0,
		P3109K8P3, P3109K8P4, P3109K8P5, P3109K8P3Finite, P3109K8P4Finite, P3109K8P5Finite}
}

var aliases = map[string]string{
	"binary64": "fp64", "double": "fp64", "float64": "fp64",
	"binary32": "fp32", "single": "fp32", "float32": "fp32",
	"binary16": "fp16", "half": "fp16", "float16": "fp16",
	"bfloat16": "bf16",
	"fp8-e4m3": "e4m3", "e4m3fn": "e4m3", "fp8-e5m2": "e5m2",
	"fp6-e2m3": "e2m3", "fp6-e3m2": "e3m2", "fp4-e2m1": "e2m1", "fp4": "e2m1",
	"e8m0fnu": "e8m0", "ue8m0": "e8m0", "float8_e8m0fnu": "e8m0",
}

// Parse finds a format by name, case-insensitively: a predefined name or
// alias (fp64, fp32, fp16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, e8m0),
// p3109-kKpP[-finite|-extended] for any P3109 binary format, or
// custom:p=P,emin=E,emax=M[,subnormals=off][,specials=ieee|nan|none|p3109-extended|p3109-finite|unsigned].
//
// The suffixes "+ftz" (subnormals off) and "+sat" (saturating) may follow any
// name, as Format.Name writes them.
func Parse(name string) (Format, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	ftz, sat := false, false
	for {
		if r, ok := strings.CutSuffix(s, "+ftz"); ok {
			s, ftz = r, true
		} else if r, ok := strings.CutSuffix(s, "+sat"); ok {
			s, sat = r, true
		} else {
			break
		}
	}
	f, err := parseBase(name, s)
	if err != nil {
		return Format{}, err
	}
	if ftz {
		f = f.WithSubnormals(false)
	}
	return f.WithSaturation(sat), nil
}

func parseBase(name, s string) (Format, error) {
	if a, ok := aliases[s]; ok {
		s = a
	}
	for _, f := range Builtin() {
		if f.name == s {
			return f, nil
		}
	}
	if rest, ok := strings.CutPrefix(s, "p3109-"); ok {
		return parseP3109(name, rest)
	}
	if rest, ok := strings.CutPrefix(s, "custom:"); ok {
		return parseCustom(name, rest)
	}
	return Format{}, fmt.Errorf("format: unknown format %q; valid formats: %s", name, strings.Join(Names(), ", "))
}

// Names lists the names Parse accepts, aliases and patterns included.
func Names() []string {
	var ns []string
	for _, f := range Builtin() {
		ns = append(ns, f.name)
	}
	for a := range aliases {
		ns = append(ns, a)
	}
	sortStrings(ns[len(Builtin()):])
	return append(ns, "p3109-kKpP[-finite|-extended]", "custom:p=P,emin=E,emax=M[,subnormals=off][,specials="+strings.Join(specialsNames, "|")+"]", "NAME+ftz", "NAME+sat")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func parseP3109(name, rest string) (Format, error) {
	extended := true
	if r, ok := strings.CutSuffix(rest, "-finite"); ok {
		rest, extended = r, false
	} else if r, ok := strings.CutSuffix(rest, "-extended"); ok {
		rest = r
	}
	var k, p int
	if n, err := fmt.Sscanf(rest, "k%dp%d", &k, &p); err != nil || n != 2 || fmt.Sprintf("k%dp%d", k, p) != rest {
		return Format{}, fmt.Errorf("format: %q is not a P3109 name like p3109-k8p3 or p3109-k8p4-finite", name)
	}
	return P3109(k, p, extended)
}

func parseCustom(name, rest string) (Format, error) {
	s := Spec{Subnormals: true, P: -1, Emin: math.MinInt, Emax: math.MinInt}
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return Format{}, fmt.Errorf("format: %q: %q is not key=value", name, kv)
		}
		if seen[key] { // the last one would win silently
			return Format{}, fmt.Errorf("format: %q: %s is given twice", name, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "p":
			s.P, err = strconv.Atoi(val)
		case "emin":
			s.Emin, err = strconv.Atoi(val)
		case "emax":
			s.Emax, err = strconv.Atoi(val)
		case "subnormals":
			s.Subnormals, err = parseOnOff(val)
		case "specials":
			err = fmt.Errorf("valid: %s", strings.Join(specialsNames, ", "))
			for i, n := range specialsNames {
				if val == n {
					s.Specials, err = Specials(i), nil
				}
			}
		default:
			err = fmt.Errorf("unknown key (valid: p, emin, emax, subnormals, specials)")
		}
		if err != nil {
			return Format{}, fmt.Errorf("format: %q: bad %q: %v", name, kv, err)
		}
	}
	if s.P == -1 || s.Emin == math.MinInt || s.Emax == math.MinInt {
		return Format{}, fmt.Errorf("format: %q needs p, emin and emax, e.g. custom:p=11,emin=-14,emax=15", name)
	}
	return New(s)
}

func parseOnOff(s string) (bool, error) {
	switch s {
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("want on or off")
}

// Name is the format's canonical name, as Parse accepts it: the base name,
// then "+ftz" when subnormals were turned off and "+sat" when saturating.
func (f Format) Name() string {
	n := f.name
	if !f.subnormals && f.baseSubnormals {
		n += "+ftz"
	}
	if f.saturate {
		n += "+sat"
	}
	return n
}

func (f Format) String() string { return f.Name() }

// Bits is the storage width, or 0 when the format has no encoding.
func (f Format) Bits() int { return f.bits }

// Precision p counts the significand bits, the implicit bit included.
func (f Format) Precision() int { return f.p }

// Emin is the exponent of the smallest normal binade.
func (f Format) Emin() int { return f.emin }

// Emax is the exponent of the largest binade (which may hold special codes).
func (f Format) Emax() int { return f.emax }

// Subnormals reports whether values below 2^Emin keep gradual underflow.
func (f Format) Subnormals() bool { return f.subnormals }

// Saturates reports whether overflow and ±Inf clamp to ±MaxFinite.
func (f Format) Saturates() bool { return f.saturate || f.specials == NoSpecials }

// Specials tells which codes are Inf and NaN.
func (f Format) Specials() Specials { return f.specials }

// MaxFinite is the largest finite value.
func (f Format) MaxFinite() float64 { return f.maxFinite }

// MinNormal is 2^Emin.
func (f Format) MinNormal() float64 { return math.Ldexp(1, f.emin) }

// MinSubnormal is the smallest positive subnormal 2^(Emin-p+1), or 0 when the
// format has none (subnormals off, or p = 1).
func (f Format) MinSubnormal() float64 {
	if !f.subnormals || f.p == 1 {
		return 0
	}
	return math.Ldexp(1, f.emin-f.p+1)
}

// UnitRoundoff is u = 2^-p, the relative error bound of round to nearest.
func (f Format) UnitRoundoff() float64 { return math.Ldexp(1, -f.p) }

// WithSubnormals returns the format with gradual underflow on or off. Off,
// values below 2^Emin round as if the only neighbours there were 0 and 2^Emin:
// round to nearest flushes those below 2^(Emin-1) to zero and lifts those
// above to 2^Emin; toward zero flushes all; up lifts all positive ones.
func (f Format) WithSubnormals(on bool) Format {
	f.subnormals = on
	return f
}

// WithSaturation returns the format with overflow and ±Inf clamping to
// ±MaxFinite (on) or following the format's specials (off).
func (f Format) WithSaturation(on bool) Format {
	f.saturate = on
	return f
}
