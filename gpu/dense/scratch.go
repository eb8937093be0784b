package dense

import (
	"errors"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
)

// halfScratch is fp16-store's work space beside its working matrix: the
// diagonal block's fp32 work, the inverted triangles, the panels' copies,
// the growth words, the Inverters, the events and the products' plans,
// for one order n and block size nb. The Solver keeps the last one
// between factorizations (takeScratch, putScratch): allocating it took
// 2.2 ms of the 3.7 ms in which fp16-store found that a random matrix of
// order 8192 needs pivoting (H200, BenchmarkHalfFailure).
type halfScratch struct {
	n, nb  int
	diag   *gpu.Buffer // the diagonal block in fp32, then its LU
	inv32  *gpu.Buffer // U₁₁⁻¹ in fp32 (side)
	inv32L *gpu.Buffer // L₁₁⁻¹ in fp32 (side2)
	invU   *gpu.Buffer // U₁₁⁻¹ in fp16, for L₂₁
	invL   *gpu.Buffer // L₁₁⁻¹ in fp16, for U₁₂
	tmpL   *gpu.Buffer // A₂₁ copied: L₂₁ = A₂₁·U₁₁⁻¹ is out of place
	tmpU   *gpu.Buffer // A₁₂ copied
	work   *gpu.Buffer // sgetrf's work space, its info word at info
	info   uintptr
	growth *gpu.Buffer // max |Â|, then per step max |L| and max |U| (binary32 bits)
	// invertU and invertL invert full diagonal blocks (nil: strsm, for
	// orders the Inverter does not take and the last, narrower block).
	invertU, invertL  *fp16.Inverter
	ready, paneled    *gpu.Event // the next panel's columns and rows are updated; it is done
	diagDone, u12Done *gpu.Event // the panel's diagonal block is factored; side2's part is done
	products          *fp16.Products
}

// takeScratch returns the kept work space when it is for n and nb (and
// no other factorization holds it), else a new one.
func (e *Solver) takeScratch(la *gpu.Linalg, n, nb int) (*halfScratch, error) {
	e.scratchMu.Lock()
	if sc := e.scratch; sc != nil && sc.n == n && sc.nb == nb {
		e.scratch = nil
		e.scratchMu.Unlock()
		return sc, nil
	}
	e.scratchMu.Unlock()
	return e.newScratch(la, n, nb)
}

// putScratch keeps sc for the next factorization, freeing the one kept
// before.
func (e *Solver) putScratch(sc *halfScratch) {
	e.scratchMu.Lock()
	old := e.scratch
	e.scratch = sc
	e.scratchMu.Unlock()
	if old != nil {
		old.free()
	}
}

// FreeScratch frees the work space the Solver keeps between fp16-store
// factorizations (about 4·nb·n bytes for order n and block size nb, 256
// MB at n = 65536) and refinement's last vectors (40·n bytes); the next
// ones allocate them again.
func (e *Solver) FreeScratch() {
	e.scratchMu.Lock()
	sc, v := e.scratch, e.vectors
	e.scratch, e.vectors = nil, nil
	e.scratchMu.Unlock()
	if sc != nil {
		sc.free()
	}
	if v != nil {
		v.Free()
	}
}

// takeVectors returns refinement's kept vectors with b uploaded when they
// are of b's order (and no other refinement holds them), else new ones:
// their allocation was most of the 0.8–1.6 ms a Resident took to set up
// at n = 32768 (H200, BenchmarkRefineSetup).
func (e *Solver) takeVectors(b []float64) (*fp16.Vectors, error) {
	e.scratchMu.Lock()
	v := e.vectors
	if v != nil && v.N == len(b) {
		e.vectors = nil
	} else {
		v = nil
	}
	e.scratchMu.Unlock()
	if v == nil {
		return fp16.NewVectors(e.d, b)
	}
	if err := e.d.Upload(v.Slot(fp16.SlotB), b); err != nil {
		return nil, errors.Join(err, v.Free())
	}
	return v, nil
}

// putVectors keeps v for the next refinement, freeing the ones kept
// before.
func (e *Solver) putVectors(v *fp16.Vectors) error {
	e.scratchMu.Lock()
	old := e.vectors
	e.vectors = v
	e.scratchMu.Unlock()
	if old != nil {
		return old.Free()
	}
	return nil
}

func (e *Solver) newScratch(la *gpu.Linalg, n, nb int) (*halfScratch, error) {
	sc := &halfScratch{n: n, nb: nb, products: fp16.NewProducts(e.lt)}
	d, jb := e.d, min(nb, n)
	steps := (n + nb - 1) / nb
	for _, s := range []struct {
		buf   **gpu.Buffer
		bytes int
	}{
		{&sc.diag, 4 * jb * jb}, {&sc.inv32, 4 * jb * jb}, {&sc.inv32L, 4 * jb * jb},
		{&sc.invU, 2 * jb * jb}, {&sc.invL, 2 * jb * jb},
		{&sc.tmpL, 2 * jb * max(n-jb, 1)}, {&sc.tmpU, 2 * jb * max(n-jb, 1)},
		{&sc.growth, 4 * (1 + 2*steps)},
	} {
		var err error
		if *s.buf, err = d.Alloc(s.bytes); err != nil {
			sc.free()
			return nil, err
		}
	}
	var err error
	if sc.work, err = e.getrfWork(la, FP32, jb, jb, sc.diag.Ptr(), jb); err != nil {
		sc.free()
		return nil, err
	}
	sc.info = sc.work.Ptr() + uintptr(sc.work.Bytes()-256)
	for _, ev := range []**gpu.Event{&sc.ready, &sc.paneled, &sc.diagDone, &sc.u12Done} {
		if *ev, err = d.NewEvent(); err != nil {
			sc.free()
			return nil, err
		}
	}
	if fp16.Inverts(nb) && n >= nb {
		if sc.invertU, err = fp16.NewInverter(d, sc.diag, sc.inv32, nb, true); err == nil {
			sc.invertL, err = fp16.NewInverter(d, sc.diag, sc.inv32L, nb, false)
		}
	}
	if err != nil {
		sc.free()
		return nil, err
	}
	return sc, nil
}

// free releases sc; a release that fails leaves nothing to do.
func (sc *halfScratch) free() {
	for _, ev := range []*gpu.Event{sc.ready, sc.paneled, sc.diagDone, sc.u12Done} {
		if ev != nil {
			ev.Close()
		}
	}
	for _, v := range []*fp16.Inverter{sc.invertU, sc.invertL} {
		if v != nil {
			v.Free()
		}
	}
	gpu.FreeAll(sc.diag, sc.inv32, sc.inv32L, sc.invU, sc.invL, sc.tmpL, sc.tmpU, sc.growth, sc.work)
}
