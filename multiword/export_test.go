package multiword

// JointStep is jointStep, for the external tests.
func (p *Plan) JointStep() int { return p.jointStep() }
