package format

import (
	"fmt"
	"strconv"
	"strings"
)

// Mode is a rounding mode. The deterministic modes are constants; the
// stochastic modes draw random bits from a Source supplied by the caller.
//
// StochasticBits(n) builds the mode that uses n random bits (IEEE P3109's
// StochasticA⟨n⟩); Stochastic is the same rule with 64 bits, which rounds up
// with probability equal to the distance from the value below (to within
// 2^-64).
type Mode uint8

const (
	NearestEven       Mode = iota // ties to the neighbour with an even last bit (IEEE default)
	NearestAway                   // ties away from zero
	NearestTowardZero             // ties toward zero
	TowardZero                    // truncation
	Up                            // toward +Inf
	Down                          // toward -Inf
	AwayFromZero                  // toward the neighbour of larger magnitude (P3109 TowardMaxMagnitude)
	ToOdd                         // inexact results get an odd last bit (jamming)
	Stochastic                    // up with probability proportional to the distance from below
	StochasticHalf                // inexact results go up or down with probability 1/2 each

	numFixedModes

	// stochasticBitsBase+n encodes StochasticBits(n).
	stochasticBitsBase Mode = 128
)

// MaxStochasticBits is the largest n accepted by StochasticBits.
const MaxStochasticBits = 64

// StochasticBits returns the stochastic mode with n random bits, 1 ≤ n ≤ 64:
// a value at fraction η ∈ [0,1) of the way from its lower neighbour to its
// upper one rounds away from the lower one iff ⌊η·2^n⌋ + R ≥ 2^n, with R
// uniform in [0, 2^n). So η below 2^-n never rounds up, and the probability is
// η truncated to n bits.
func StochasticBits(n int) (Mode, error) {
	if n < 1 || n > MaxStochasticBits {
		return 0, fmt.Errorf("format: stochastic rounding needs 1 to %d random bits, not %d", MaxStochasticBits, n)
	}
	return stochasticBitsBase + Mode(n), nil
}

// IsStochastic reports whether the mode draws random bits.
func (m Mode) IsStochastic() bool {
	return m == Stochastic || m == StochasticHalf || m.randomBits() > 0
}

// randomBits is n for StochasticBits(n), 64 for Stochastic and 0 otherwise.
func (m Mode) randomBits() uint {
	switch {
	case m == Stochastic:
		return 64
	case m > stochasticBitsBase && m <= stochasticBitsBase+MaxStochasticBits:
		return uint(m - stochasticBitsBase)
	}
	return 0
}

func (m Mode) valid() bool {
	return m < numFixedModes || m.randomBits() > 0
}

var modeNames = [numFixedModes]string{
	NearestEven:       "rne",
	NearestAway:       "rna",
	NearestTowardZero: "rnz",
	TowardZero:        "rz",
	Up:                "ru",
	Down:              "rd",
	AwayFromZero:      "ra",
	ToOdd:             "ro",
	Stochastic:        "sr",
	StochasticHalf:    "sr-half",
}

var modeDescriptions = [numFixedModes]string{
	NearestEven:       "round to nearest, ties to even",
	NearestAway:       "round to nearest, ties away from zero",
	NearestTowardZero: "round to nearest, ties toward zero",
	TowardZero:        "round toward zero (truncate)",
	Up:                "round toward +Inf",
	Down:              "round toward -Inf",
	AwayFromZero:      "round away from zero",
	ToOdd:             "round to odd (truncate, then set the last bit if inexact)",
	Stochastic:        "stochastic, up with probability proportional to the distance",
	StochasticHalf:    "stochastic, up or down with probability 1/2 when inexact",
}

// String returns the short name that ParseMode accepts (e.g. "rne", "sr-bits=8").
func (m Mode) String() string {
	if m < numFixedModes {
		return modeNames[m]
	}
	if n := m.randomBits(); n > 0 {
		return "sr-bits=" + strconv.Itoa(int(n))
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Description is a one-line explanation of the mode.
func (m Mode) Description() string {
	if m < numFixedModes {
		return modeDescriptions[m]
	}
	if n := m.randomBits(); n > 0 {
		return fmt.Sprintf("stochastic with %d random bits (P3109 StochasticA)", n)
	}
	return "invalid mode"
}

// Modes lists the fixed modes in order; StochasticBits adds the rest.
func Modes() []Mode {
	ms := make([]Mode, numFixedModes)
	for i := range ms {
		ms[i] = Mode(i)
	}
	return ms
}

// ParseMode accepts the names printed by Mode.String, case-insensitively, and
// the long names of the IEEE and P3109 documents.
func ParseMode(name string) (Mode, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	if rest, ok := strings.CutPrefix(s, "sr-bits="); ok {
		n, err := strconv.Atoi(rest)
		if err != nil {
			return 0, fmt.Errorf("format: rounding mode %q: the number of random bits %q is not an integer", name, rest)
		}
		return StochasticBits(n)
	}
	for m, n := range modeNames {
		if s == n {
			return Mode(m), nil
		}
	}
	if m, ok := modeAliases[s]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("format: unknown rounding mode %q; valid modes: %s", name, strings.Join(append(modeNames[:], "sr-bits=N"), ", "))
}

var modeAliases = map[string]Mode{
	"nearest-even": NearestEven, "nearesttiestoeven": NearestEven, "rn": NearestEven,
	"nearest-away": NearestAway, "nearesttiestoaway": NearestAway,
	"nearest-toward-zero": NearestTowardZero,
	"toward-zero":         TowardZero, "towardzero": TowardZero, "trunc": TowardZero,
	"up": Up, "towardpositive": Up,
	"down": Down, "towardnegative": Down,
	"away": AwayFromZero, "towardmaxmagnitude": AwayFromZero,
	"odd": ToOdd, "toodd": ToOdd,
	"stochastic": Stochastic, "sr-prop": Stochastic,
	"sr-5050": StochasticHalf,
}
