package fp16

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
)

// BlockLUBlocks is the thread blocks a BlockLU takes by default: beside
// the fp16 LU's update (FactorHalf, 2 H200s), 64 ran its steps in
// 112.6–113.2 ms at n = 46080, 32 in 115–117 and 132 in 132 (blocks that
// wait for the update's multiprocessors).
const BlockLUBlocks = 64

// A BlockLU factors an LU's n×n diagonal block in fp16 without pivoting
// and inverts both its triangles, in one cooperative launch
// (kernels/half.cu's block_lu_f16): in fp32, in tiles of 64,
// right-looking, with L⁻¹ and U⁻¹ solved for step by step beside the
// factors. It stands for cuSOLVER's sgetrf followed by two Inverters,
// whose thirty-odd launches made a chain on the fp16 LU's critical path.
// The factors and inverses are of the block rounded to fp32 from fp16;
// the factors go back in fp16 and the inverses out in fp16 and, for the
// triangular solves, transposed in fp32.
type BlockLU struct {
	n             int
	blocks        uint32
	lu, x, z      *gpu.Buffer // fp32 n×n work: the factors, L⁻¹, U⁻¹
	count         *gpu.Buffer // the grid barrier's
	marks         *gpu.Buffer // when set, the kernel's timeline (BenchmarkBlockLU)
	factor, clear *gpu.Function
}

// FactorsBlock reports whether a BlockLU takes blocks of order n:
// multiples of 64.
func FactorsBlock(n int) bool { return n >= 64 && n%64 == 0 }

// NewBlockLU prepares the factorization of blocks of order n on d, on
// blocks thread blocks (0: BlockLUBlocks, at most d's SMs).
func NewBlockLU(d *gpu.Device, n, blocks int) (*BlockLU, error) {
	if !FactorsBlock(n) {
		return nil, fmt.Errorf("fp16: a BlockLU takes orders that are multiples of 64, not %d", n)
	}
	if blocks <= 0 {
		blocks = BlockLUBlocks
	}
	b := &BlockLU{n: n, blocks: uint32(min(blocks, d.Multiprocessors()))}
	var err error
	if b.factor, b.clear, err = functions(d, "block_lu_f16", "zero_u32"); err != nil {
		return nil, err
	}
	b.factor.SetCooperative() // its blocks wait for each other
	for _, buf := range []**gpu.Buffer{&b.lu, &b.x, &b.z} {
		if err == nil {
			*buf, err = d.Alloc(4 * n * n)
		}
	}
	if err == nil {
		b.count, err = d.Alloc(4)
	}
	if err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// Free frees the work space.
func (b *BlockLU) Free() { gpu.FreeAll(b.lu, b.x, b.z, b.count) }

// N is the order of the blocks b factors.
func (b *BlockLU) N() int { return b.n }

// BlockOut is where a BlockLU puts what it makes besides the factors.
type BlockOut struct {
	InvU, InvL *gpu.Buffer // U⁻¹ and L⁻¹ in fp16, n×n, leading dimension n
	// KeptU and KeptL, when not nil, receive U⁻¹ and L⁻¹ in fp32,
	// transposed (as TriSolver reads them), leading dimension LdKept.
	KeptU, KeptL *gpu.Buffer
	LdKept       int
	// Growth's two words (binary32 bits) are raised to max |L| below
	// the diagonal and max |U|; a zero pivot shows there as Inf or NaN.
	Growth *gpu.Buffer
}

// Factor queues on st the factorization in place of the n×n fp16 block
// at a (leading dimension lda) and out's inverses and maxima.
func (b *BlockLU) Factor(st *gpu.Stream, a *gpu.Buffer, lda int, out BlockOut) error {
	n := b.n
	switch {
	case lda < n || a.Bytes() < 2*(lda*(n-1)+n):
		return fmt.Errorf("fp16: a BlockLU of order %d with a block of %d bytes, leading dimension %d", n, a.Bytes(), lda)
	case out.InvU == nil || out.InvL == nil || out.Growth == nil:
		return errors.New("fp16: a BlockLU needs InvU, InvL and Growth")
	case (out.KeptU == nil) != (out.KeptL == nil) || out.KeptU != nil && out.LdKept < n:
		return fmt.Errorf("fp16: a BlockLU keeps both inverses or neither, at a leading dimension of %d or more", n)
	}
	keptU, keptL, marks := any(uintptr(0)), any(uintptr(0)), any(uintptr(0))
	if out.KeptU != nil {
		keptU, keptL = out.KeptU, out.KeptL
	}
	if b.marks != nil {
		marks = b.marks
	}
	if err := b.clear.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, st, b.count); err != nil {
		return err // a barrier count not zeroed would hang the launch
	}
	return b.factor.Launch([3]uint32{b.blocks, 1, 1}, [3]uint32{256, 1, 1}, 0, st, a, int64(lda), int32(n),
		b.lu, b.x, b.z, out.InvU, out.InvL, keptU, keptL, int64(out.LdKept), out.Growth, b.count, marks)
}
