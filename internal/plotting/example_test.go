package plotting_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mwmm/mwmm/internal/plotting"
)

// Two panels of measured errors beside an a-priori bound. One error is
// exactly zero, so Save draws it at Floor(fig) and notes that in the Y label.
func ExampleSave() {
	n := []float64{512, 1024, 2048, 4096}
	bound := plotting.Series{Name: "bound", X: n, Y: []float64{6e-5, 1.2e-4, 2.4e-4, 4.8e-4}, Dashed: true}
	fig := plotting.Figure{
		Title:  "C = AB in fp32",
		XLabel: "n", YLabel: "componentwise error",
		LogX: true, LogY: true,
		Panels: []plotting.Panel{
			{Title: "round toward zero", Series: []plotting.Series{
				{Name: "measured", X: n, Y: []float64{3.2e-7, 6.1e-7, 1.3e-6, 2.4e-6}},
				bound,
			}},
			{Title: "round to nearest", Series: []plotting.Series{
				{Name: "measured", X: n, Y: []float64{0, 4.0e-8, 5.5e-8, 8.1e-8}},
				bound,
			}},
		},
	}
	path := filepath.Join(os.TempDir(), "plotting-example.svg")
	defer os.Remove(path)
	if err := plotting.Save(fig, path); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("zero drawn at", plotting.Floor(fig))
	// Output: zero drawn at 1e-09
}
