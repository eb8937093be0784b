package fp16

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/solve"
)

// Vectors are refinement's vectors on one device, the common part of
// gpu/dense's and gpu/dist's solve.Resident: b, the iterate x, the
// residual r, a correction d and the best iterate (N float64s each, in
// the slots SlotB … SlotBest), and the two words where amax2_f64 raises
// ‖r‖∞ and ‖x‖∞. The packages add how r and the corrections are made.
type Vectors struct {
	d        *gpu.Device
	N        int
	v, norms *gpu.Buffer
	fn       map[string]*gpu.Function // half.cu's vector kernels
	// part holds residual_dw_part's pairs: chunks chunks of columns.
	part          *gpu.Buffer
	chunks, chunk int
}

// The vectors' slots.
const (
	SlotB = iota
	SlotX
	SlotR
	SlotD
	SlotBest
	slots
)

// vectorKernels are half.cu's kernels on refinement's vectors.
var vectorKernels = []string{"residual_start", "residual_sub", "residual_dw_part", "residual_dw", "amax2_f64", "add_f64", "copy_vec_f64", "scaled_to_f32", "scaled_from_f32"}

// NewVectors allocates the vectors on d and uploads b.
func NewVectors(d *gpu.Device, b []float64) (*Vectors, error) {
	mod, err := d.Module(Kernels())
	if err != nil {
		return nil, err
	}
	v := &Vectors{d: d, N: len(b), fn: map[string]*gpu.Function{}}
	for _, name := range vectorKernels {
		if v.fn[name], err = mod.Function(name); err != nil {
			return nil, err
		}
	}
	var err1, err2 error
	v.v, err1 = d.Alloc(8 * max(1, v.N) * slots)
	v.norms, err2 = d.Alloc(16)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("gpu: refinement's vectors: %w", errors.Join(err, v.Free()))
	}
	if err := d.Upload(v.Slot(SlotB), b); err != nil {
		return nil, errors.Join(err, v.Free())
	}
	return v, nil
}

// Slot is one of the vectors.
func (v *Vectors) Slot(i int) *gpu.Buffer { return v.v.View(8 * v.N * i) }

// Norms are the two norms' words, for residual_start, residual_sub and
// amax2_f64.
func (v *Vectors) Norms() *gpu.Buffer { return v.norms }

// Launch queues the vector kernel name over the N entries on st (nil:
// the default stream), on q or, with q nil, at once.
func (v *Vectors) Launch(q *gpu.LaunchQueue, st *gpu.Stream, name string, args ...any) error {
	grid, block := gpu.StrideGrid(v.N), [3]uint32{256, 1, 1}
	if q == nil {
		return v.fn[name].Launch(grid, block, 0, st, args...)
	}
	return q.Launch(v.fn[name], grid, block, 0, st, args...)
}

// Queue runs f's launches and calls in one trip to the device's thread.
func (v *Vectors) Queue(f func(q *gpu.LaunchQueue) error) error {
	return v.d.Do(func() error {
		q := v.d.NewLaunchQueue()
		if err := f(q); err != nil {
			return err
		}
		return q.Flush()
	})
}

// ReadNorms brings ‖r‖∞ and ‖x‖∞ to the host, after the work queued
// before it on the default stream.
func (v *Vectors) ReadNorms() (normR, normX float64, err error) {
	var bits [2]uint64
	if err := v.d.Download(bits[:], v.norms); err != nil {
		return 0, 0, err
	}
	return math.Float64frombits(bits[0]), math.Float64frombits(bits[1]), nil
}

// Add sets x = x + d.
func (v *Vectors) Add(d []float64) error {
	if len(d) != v.N {
		return fmt.Errorf("gpu: refinement's vectors: a correction of %d entries for order %d", len(d), v.N)
	}
	return v.Queue(func(q *gpu.LaunchQueue) error {
		q.Do(func() error { return v.d.Upload(v.Slot(SlotD), d) })
		return v.Launch(q, nil, "add_f64", v.Slot(SlotX), v.Slot(SlotD), int64(v.N))
	})
}

// Keep copies x into the best iterate.
func (v *Vectors) Keep() error {
	return v.Queue(func(q *gpu.LaunchQueue) error {
		return v.Launch(q, nil, "copy_vec_f64", v.Slot(SlotX), v.Slot(SlotBest), int64(v.N))
	})
}

// Read copies x, r or the best iterate into dst.
func (v *Vectors) Read(which solve.ResidentVector, dst []float64) error {
	slot, ok := map[solve.ResidentVector]int{solve.IterateVector: SlotX, solve.ResidualVector: SlotR, solve.BestVector: SlotBest}[which]
	if !ok || len(dst) > v.N {
		return fmt.Errorf("gpu: refinement's vectors: reading vector %d into %d entries", which, len(dst))
	}
	return v.d.Download(dst, v.Slot(slot))
}

// Free frees the vectors.
func (v *Vectors) Free() error { return gpu.FreeAll(v.v, v.norms, v.part) }

// PairChunks splits a product of rows rows and cols columns into column
// chunks for residual_dw_part: enough thread blocks (256 rows by a chunk)
// for 8 a multiprocessor, at most 64 chunks.
func PairChunks(rows, cols, sms int) (chunks, chunk int) {
	rows, cols = max(rows, 1), max(cols, 1)
	rowBlocks := (rows + 255) / 256
	chunks = min(max(1, (8*sms+rowBlocks-1)/rowBlocks), 64, cols)
	chunk = (cols + chunks - 1) / chunks
	return (cols + chunk - 1) / chunk, chunk
}

// PairProduct queues out = A·x in double-word arithmetic for the
// rows×cols fp64 A at a (column-major, leading dimension lda) on st: out
// holds 2·rows float64s, the pairs' high parts then their low parts, and
// part 16·rows·chunks bytes (PairChunks) for the chunks' pairs. A GPU's
// share of a double-word residual over several (package dist).
func PairProduct(d *gpu.Device, st *gpu.Stream, a *gpu.Buffer, lda, rows, cols int, x, part, out *gpu.Buffer) error {
	if rows == 0 {
		return nil
	}
	mod, err := d.Module(Kernels())
	if err != nil {
		return err
	}
	if cols == 0 {
		return d.Memset8(out, 0)
	}
	chunks, chunk := PairChunks(rows, cols, d.Multiprocessors())
	fp, err1 := mod.Function("residual_dw_part")
	fs, err2 := mod.Function("pairs_sum")
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	grid := [3]uint32{uint32((rows + 255) / 256), uint32(chunks), 1}
	if err := fp.Launch(grid, [3]uint32{256, 1, 1}, 0, st, a, int64(lda), int64(rows), int64(cols), int64(chunk), x, part); err != nil {
		return err
	}
	return fs.Launch(gpu.StrideGrid(rows), [3]uint32{256, 1, 1}, 0, st, part, int64(rows), int64(chunks), out)
}

// QueueDoubleWordResidual queues r = b − A·x in double-word arithmetic, rounded
// to fp64 once, for the N×N fp64 A at a (column-major, leading dimension
// lda), and zeroes the norms' words, on the default stream: amax2_f64
// may follow.
//
// The first call allocates the chunks' pairs (16·N·chunks bytes, at once,
// not queued), which most solves never need.
func (v *Vectors) QueueDoubleWordResidual(q *gpu.LaunchQueue, a *gpu.Buffer, lda int) error {
	if v.part == nil {
		v.chunks, v.chunk = PairChunks(v.N, v.N, v.d.Multiprocessors())
		var err error
		if v.part, err = v.d.Alloc(16 * max(1, v.N) * v.chunks); err != nil {
			return fmt.Errorf("gpu: double-word residuals: %w", err)
		}
	}
	n := int64(v.N)
	grid := [3]uint32{uint32((v.N + 255) / 256), uint32(v.chunks), 1}
	if err := q.Launch(v.fn["residual_dw_part"], grid, [3]uint32{256, 1, 1}, 0, nil,
		a, int64(lda), n, n, int64(v.chunk), v.Slot(SlotX), v.part); err != nil {
		return err
	}
	return v.Launch(q, nil, "residual_dw", v.Slot(SlotB), v.part, n, int64(v.chunks), v.Slot(SlotR), v.norms)
}
