//go:build !linux

package npy

// adviseHuge is a Linux hint (huge_linux.go); elsewhere nothing.
func adviseHuge([]float64) {}
