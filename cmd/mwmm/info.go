package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/nccl"
)

var infoCmd = &command{
	name:    "info",
	summary: "show the CPU's rounding kernel, the GPUs, and the CUDA driver and libraries found",
	usage:   "mwmm info [--json]",
	help: `
Info first prints the CPU (its model where the system names it, the
architecture, the number of threads) and the loops that round values to
the simulated formats on it: "avx512" (the assembly kernel with its
stochastic loops 8 lanes wide, amd64 with AVX-512F), "avx2" (amd64 with
AVX2; GODEBUG=cpu.avx512f=off selects it there) or "portable" (pure Go;
GODEBUG=cpu.avx2=off selects it on amd64). Then it
lists the NVIDIA GPUs that mwmm can use: for each, its index, name,
compute capability, number of multiprocessors, total and free memory, and
the architecture its kernels are compiled for (sm_90a on Hopper: the
a-variant has the wgmma instructions). Then the versions of the CUDA
driver, NVRTC (the run-time compiler of the kernels), cuBLASLt (the
baseline matrix products), and cuBLAS and cuSOLVER (the GPU solver's
panels, triangular solves and baselines).

mwmm links no CUDA library: it looks for libcuda.so.1, libnvrtc.so.13,
libcublasLt.so.13, libcublas.so.13 and libcusolver.so.12 when it runs, on
the dynamic loader's path and in the usual CUDA folders ($CUDA_PATH/lib64,
/usr/local/cuda/lib64, ...). It needs a driver for CUDA 13.0 or newer.
Without a usable GPU, info prints the CPU line and one more, "no GPU: "
and the reason, and exits with status 0: that is information, not a
failure. A missing NVRTC,
cuBLASLt, cuBLAS or cuSOLVER is reported in its version line.

--json prints the same as a JSON object, {"cpu": ..., "rounding_kernel":
..., "gpu": false, "reason": ...} without a GPU.`,
	examples: `
mwmm info
mwmm info --json`,
	brief: `
Output:
  json  print the information as JSON
`,
	flags: func() *flag.FlagSet { fs, _ := infoFlags(); return fs },
	run:   runInfo,
}

func infoFlags() (*flag.FlagSet, *bool) {
	fs := newFlagSet("info")
	asJSON := fs.Bool("json", false, "print the information as JSON")
	return fs, asJSON
}

// infoJSON is the output of 'mwmm info --json'.
type infoJSON struct {
	CPU             string       `json:"cpu"`             // "AMD EPYC (amd64, 2 threads)"
	RoundingKernel  string       `json:"rounding_kernel"` // format.Kernel(): "avx512", "avx2" or "portable"
	GPU             bool         `json:"gpu"`
	Reason          string       `json:"reason,omitempty"`         // why there is no GPU
	Driver          string       `json:"driver,omitempty"`         // the CUDA version the driver supports, "13.0"
	DriverVersion   int          `json:"driver_version,omitempty"` // the same as cuDriverGetVersion says it, 13000
	NVRTC           string       `json:"nvrtc,omitempty"`          // "13.0"
	NVRTCError      string       `json:"nvrtc_error,omitempty"`    // why there is no NVRTC
	CublasLt        string       `json:"cublaslt,omitempty"`       // "13.1.0"
	CublasLtVersion int          `json:"cublaslt_version,omitempty"`
	CublasLtError   string       `json:"cublaslt_error,omitempty"`
	Cublas          int          `json:"cublas_version,omitempty"` // 130100
	Cusolver        string       `json:"cusolver,omitempty"`       // "12.0.4"
	CusolverError   string       `json:"cusolver_error,omitempty"` // why the solver's libraries are missing
	NCCL            string       `json:"nccl,omitempty"`           // "2.28.3": work on several GPUs
	NCCLError       string       `json:"nccl_error,omitempty"`     // why there is no NCCL
	Devices         []deviceJSON `json:"devices,omitempty"`
	Peers           []peerJSON   `json:"peers,omitempty"` // each pair of GPUs
}

// peerJSON says how two GPUs reach each other's memory.
type peerJSON struct {
	Pair          [2]int `json:"pair"`
	Access        bool   `json:"access"`         // direct loads and stores (NVLink or PCIe)
	NativeAtomics bool   `json:"native_atomics"` // on NVIDIA systems: an NVLink
}

type deviceJSON struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability"`
	Arch              string `json:"arch"`
	Multiprocessors   int    `json:"multiprocessors"`
	TotalMemory       uint64 `json:"total_memory_bytes"`
	FreeMemory        uint64 `json:"free_memory_bytes"`
}

func runInfo(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, asJSON := infoFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("info takes no arguments, got %q", rest[0])
	}
	info, err := gatherInfo()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "CPU          %s, rounding kernel %s\n", info.CPU, info.RoundingKernel)
	if !info.GPU {
		fmt.Fprintf(stdout, "no GPU: %s\n", info.Reason)
		return nil
	}
	for _, d := range info.Devices {
		fmt.Fprintf(stdout, "GPU %d: %s\n", d.Index, d.Name)
		fmt.Fprintf(stdout, "  compute capability  %s (kernels compiled for %s)\n", d.ComputeCapability, d.Arch)
		fmt.Fprintf(stdout, "  multiprocessors     %d\n", d.Multiprocessors)
		fmt.Fprintf(stdout, "  memory              %s total, %s free\n", infoBytes(d.TotalMemory), infoBytes(d.FreeMemory))
	}
	orNot := func(v, err string) string {
		if err != "" {
			return "not found: " + err
		}
		return v
	}
	fmt.Fprintf(stdout, "CUDA driver  %s (%d)\n", info.Driver, info.DriverVersion)
	fmt.Fprintf(stdout, "NVRTC        %s\n", orNot(info.NVRTC, info.NVRTCError))
	fmt.Fprintf(stdout, "cuBLASLt     %s\n", orNot(fmt.Sprintf("%s (%d)", info.CublasLt, info.CublasLtVersion), info.CublasLtError))
	fmt.Fprintf(stdout, "cuBLAS       %s\n", orNot(fmt.Sprint(info.Cublas), info.CusolverError))
	fmt.Fprintf(stdout, "cuSOLVER     %s\n", orNot(info.Cusolver, info.CusolverError))
	fmt.Fprintf(stdout, "NCCL         %s\n", orNot(info.NCCL, info.NCCLError))
	for _, p := range info.Peers {
		link := "no peer access (through the host)"
		if p.Access {
			link = "peer access, no native atomics (PCIe)"
			if p.NativeAtomics {
				link = "peer access with native atomics (NVLink)"
			}
		}
		fmt.Fprintf(stdout, "GPUs %d–%d     %s\n", p.Pair[0], p.Pair[1], link)
	}
	return nil
}

// gatherInfo opens each GPU in turn. No GPU is not an error; a GPU that
// the driver lists but that fails to open is.
func gatherInfo() (infoJSON, error) {
	info := infoJSON{CPU: cpuName(), RoundingKernel: format.Kernel()}
	n, err := gpu.Count()
	if err != nil {
		info.Reason = err.Error()
		return info, nil
	}
	info.GPU = true
	for i := range n {
		if err := info.addDevice(i); err != nil {
			return info, err
		}
	}
	if v, err := nccl.Version(); err != nil {
		info.NCCLError = err.Error()
	} else {
		info.NCCL = v
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			l, err := gpu.Peer(i, j)
			if err != nil {
				return info, err
			}
			info.Peers = append(info.Peers, peerJSON{Pair: [2]int{i, j}, Access: l.Access, NativeAtomics: l.NativeAtomics})
		}
	}
	return info, nil
}

// addDevice opens GPU i and adds what it says of itself (and, for GPU 0,
// of the driver and the libraries).
func (info *infoJSON) addDevice(i int) error {
	d, err := gpu.OpenIndex(i)
	if err != nil {
		return err
	}
	free, err := d.FreeMemory()
	if err != nil {
		d.Close()
		return fmt.Errorf("GPU %d: %w", i, err)
	}
	major, minor := d.ComputeCapability()
	info.Devices = append(info.Devices, deviceJSON{
		Index:             i,
		Name:              d.Name(),
		ComputeCapability: fmt.Sprintf("%d.%d", major, minor),
		Arch:              d.Arch(),
		Multiprocessors:   d.Multiprocessors(),
		TotalMemory:       d.TotalMemory(),
		FreeMemory:        free,
	})
	if i == 0 {
		info.addVersions(d)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("GPU %d: %w", i, err)
	}
	return nil
}

// addVersions adds the driver's and the CUDA libraries' versions, or why
// a library is missing.
func (info *infoJSON) addVersions(d *gpu.Device) {
	v := d.DriverVersion()
	info.Driver, info.DriverVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10), v
	if major, minor, err := d.NVRTCVersion(); err != nil {
		info.NVRTCError = err.Error()
	} else {
		info.NVRTC = fmt.Sprintf("%d.%d", major, minor)
	}
	if v, err := d.CublasLtVersion(); err != nil {
		info.CublasLtError = err.Error()
	} else {
		info.CublasLt, info.CublasLtVersion = fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100), v
	}
	if b, s, err := d.SolverVersions(); err != nil {
		info.CusolverError = err.Error()
	} else {
		info.Cublas, info.Cusolver = b, fmt.Sprintf("%d.%d.%d", s[0], s[1], s[2])
	}
}

// cpuName is the CPU's model as /proc/cpuinfo names it (where it does),
// with the architecture and the number of threads Go may use.
func cpuName() string {
	arch := fmt.Sprintf("%s, %d threads", runtime.GOARCH, runtime.NumCPU())
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return arch
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return fmt.Sprintf("%s (%s)", strings.TrimSpace(v), arch)
		}
	}
	return arch
}

func infoBytes(n uint64) string {
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
