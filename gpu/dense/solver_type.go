package dense

import (
	"sync"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/gemm"
)

// A Solver factors and solves dense systems on one device. It holds the
// GEMM engine whose kernels run the trailing updates, the cuBLASLt handle
// and workspace it shares with that engine, the blocked LU's streams,
// fp16-store's last work space and refinement's last vectors
// (FreeScratch).
// Its methods are safe for concurrent use; factorizations on one Solver
// share its streams, so they run one after another on the device.
type Solver struct {
	eng       *gemm.Engine
	d         *gpu.Device
	lt        *gpu.Lt
	workspace *gpu.Buffer

	streamsMu   sync.Mutex
	luStreams   [2]*gpu.Stream // the blocked LU's main and look-ahead streams
	halfStreams [3]*gpu.Stream // fp16-store's: independent of the default stream

	scratchMu sync.Mutex
	scratch   *halfScratch  // fp16-store's work space, kept between factorizations
	vectors   *fp16.Vectors // refinement's vectors, kept between refinements
}

// New returns a Solver on the engine's device.
func New(eng *gemm.Engine) *Solver {
	return &Solver{eng: eng, d: eng.Device(), lt: eng.Lt(), workspace: eng.Workspace()}
}

// Engine returns the GEMM engine the Solver's updates run on.
func (e *Solver) Engine() *gemm.Engine { return e.eng }

// Device returns the Solver's device.
func (e *Solver) Device() *gpu.Device { return e.d }
