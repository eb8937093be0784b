package gpu

import (
	"errors"

	"github.com/mwmm/mwmm/multiword"
)

// checkFused reports why the fused kernel cannot run the plan, or nil.
func (e *Engine) checkFused(p *multiword.Plan) error {
	return errors.New("gpu: the fused kernel is not built yet")
}

// fusedOperands runs the plan with the fused kernel on the bench operands
// (fp32 A, B row-major) into o.c32.
func (e *Engine) fusedOperands(p *multiword.Plan, o *operands, stream *Stream) error {
	return errors.New("gpu: the fused kernel is not built yet")
}
