package dist

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/solve"
)

// An MgTiming is cuSOLVERMg's solve of one system: getrf with partial
// pivoting and getrs, in fp64, over the same GPUs.
type MgTiming struct {
	GPUs          int
	Getrf, Total  time.Duration
	BackwardError float64 // ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)
}

// BenchCusolverMg times cuSOLVERMg on the system of kind drawn on t, a
// 1×G team (whose layout, columns dealt in blocks of nb, is
// cuSOLVERMg's), for the right-hand side b.
func BenchCusolverMg(t *Team, n, nb int, kind string, seed uint64, b []float64) (MgTiming, error) {
	res := MgTiming{GPUs: t.Grid.Size()}
	if t.Grid.P != 1 || !t.Whole() {
		return res, fmt.Errorf("dist: cuSOLVERMg deals columns to the GPUs of one process: a 1×G team, not %v", t.Grid)
	}
	if err := cuda.LoadCusolverMg(); err != nil {
		return res, err
	}
	sys, err := GenerateSystem(t, n, nb, kind, seed)
	if err != nil {
		return res, err
	}
	defer sys.Free()
	ms, bufs, err := mgSystem(sys, b)
	defer gpu.FreeAll(bufs...)
	if err != nil {
		return res, err
	}
	x, err := runMg(ms, &res)
	if err != nil {
		return res, err
	}
	if err := t.Ranks[0].Engine.Device().Download(x, bufs[0]); err != nil { // b's buffer on the first GPU: now x
		return res, err
	}
	res.BackwardError, err = backwardError(t, n, nb, kind, seed, x, b)
	return res, err
}

// mgSystem gives cuSOLVERMg the system's parts, b on the first GPU, and
// the pivots' and workspace's buffers.
func mgSystem(sys *System, b []float64) (*cuda.MgSystem, []*gpu.Buffer, error) {
	t := sys.A.Team
	ms := &cuda.MgSystem{N: sys.N(), NB: sys.A.ColBlock}
	var bufs []*gpu.Buffer
	alloc := func(d *gpu.Device, bytes int) (uintptr, error) {
		buf, err := d.Alloc(max(bytes, 8))
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, buf)
		return buf.Ptr(), nil
	}
	devs := make([]*gpu.Device, len(t.Ranks))
	for i, r := range t.Ranks {
		d := r.Engine.Device()
		devs[i] = d
		bp, err1 := alloc(d, 8*ms.N)
		ip, err2 := alloc(d, 4*ms.N)
		if err := errors.Join(err1, err2, r.compute.Sync()); err != nil {
			return nil, bufs, err
		}
		ms.Devices = append(ms.Devices, d.Index())
		ms.A, ms.B, ms.IPIV = append(ms.A, sys.A.part(r).Ptr()), append(ms.B, bp), append(ms.IPIV, ip)
	}
	if err := devs[0].Upload(bufs[0], b); err != nil {
		return nil, bufs, err
	}
	if err := gpu.EnablePeerAccess(devs...); err != nil {
		return nil, bufs, err
	}
	lwork, err := onThread(func() (int64, error) { return cuda.MgWorkspace(ms) })
	if err != nil {
		return nil, bufs, err
	}
	for _, d := range devs {
		w, err := alloc(d, 8*int(lwork))
		if err != nil {
			return nil, bufs, fmt.Errorf("dist: cuSOLVERMg's workspace: %w", err)
		}
		ms.Work = append(ms.Work, w)
	}
	ms.Lwork = lwork
	return ms, bufs, nil
}

// runMg solves, x in place of b.
func runMg(ms *cuda.MgSystem, res *MgTiming) ([]float64, error) {
	start := time.Now()
	info, err := onThread(func() (int, error) {
		return cuda.MgSolve(ms, func() { res.Getrf = time.Since(start) })
	})
	res.Total = time.Since(start)
	if err != nil {
		return nil, err
	}
	if info != 0 {
		return nil, fmt.Errorf("dist: cuSOLVERMg's getrf: U(%d, %d) is zero", info, info)
	}
	return make([]float64, ms.N), nil
}

// onThread runs f on an OS thread of its own: cuSOLVERMg switches the
// thread's device, which must not happen on a device's thread.
func onThread[T any](f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		v, err := f()
		ch <- result{v, err}
	}()
	r := <-ch
	return r.v, r.err
}

// backwardError draws the system again (getrf overwrote A) and measures x
// as refinement measures its own iterates.
func backwardError(t *Team, n, nb int, kind string, seed uint64, x, b []float64) (float64, error) {
	sys, err := GenerateSystem(t, n, nb, kind, seed)
	if err != nil {
		return 0, err
	}
	defer sys.Free()
	return solve.OperatorBackwardError(sys, x, b) // double-word residual: System is a DoubleWordOperator
}
