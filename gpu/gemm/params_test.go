package gemm

// CPU tests of the Go–CUDA contract: the parameter structs' layouts and
// the -D options each kernel file requires.

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

// A cField is a field of a C struct with its natural size and offset.
type cField struct {
	name, ctype string // ctype: "ptr" for any pointer, else the base type
	size, off   uintptr
}

// cSizes are the sizes (and alignments) of the C types the kernels' params
// structs use, on the 64-bit targets NVRTC compiles for.
var cSizes = map[string]uintptr{"ptr": 8, "long long": 8, "double": 8, "int": 4, "u32": 4, "unsigned": 4, "float": 4}

// parseCStruct returns the fields of `struct name { ... };` in src, laid
// out with natural alignment, and the struct's size.
func parseCStruct(t *testing.T, src, name string) ([]cField, uintptr) {
	t.Helper()
	m := regexp.MustCompile(`(?s)\bstruct\s+` + name + `\s*\{(.*?)\};`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("no struct %s in the kernel source", name)
	}
	body := regexp.MustCompile(`//[^\n]*`).ReplaceAllString(m[1], "")
	var fields []cField
	var off, align uintptr = 0, 1
	for decl := range strings.SplitSeq(body, ";") {
		decl = strings.TrimSpace(decl)
		if decl == "" {
			continue
		}
		words := strings.Fields(strings.NewReplacer("*", " * ").Replace(decl))
		ptr := slices.Contains(words, "*")
		words = slices.DeleteFunc(words, func(w string) bool { return w == "const" || w == "__restrict__" || w == "*" })
		fname := words[len(words)-1]
		ctype := strings.Join(words[:len(words)-1], " ")
		if ptr {
			ctype = "ptr"
		}
		size, ok := cSizes[ctype]
		if !ok || !regexp.MustCompile(`^\w+$`).MatchString(fname) {
			t.Fatalf("struct %s: cannot read the declaration %q (one field per declaration, types %v)", name, decl, slices.Sorted(maps.Keys(cSizes)))
		}
		off = (off + size - 1) / size * size
		fields = append(fields, cField{fname, ctype, size, off})
		off += size
		align = max(align, size)
	}
	return fields, (off + align - 1) / align * align
}

// goKinds are the Go types of the C types, by kind.
var goKinds = map[string]reflect.Kind{"ptr": reflect.Uint64, "long long": reflect.Int64, "double": reflect.Float64,
	"int": reflect.Int32, "u32": reflect.Uint32, "unsigned": reflect.Uint32, "float": reflect.Float32}

// TestParamsLayout pins each Go parameter struct to the C struct its
// kernel takes: the same fields in order (the C name without underscores,
// any case), of the matching type, at the same offsets, and the same size.
// It also checks that the kernel's signature takes the struct.
func TestParamsLayout(t *testing.T) {
	for _, tc := range []struct {
		file, cstruct, kernel string
		goType                reflect.Type
	}{
		{"fused", "FusedParams", "fused_gemm", reflect.TypeFor[fusedParams]()},
		{"wgmma", "WgmmaParams", "wgmma_gemm", reflect.TypeFor[wgmmaParams]()},
		{"wgmma", "WgmmaSplitParams", "wgmma_split", reflect.TypeFor[wgmmaSplitParams]()},
		{"scan", "PatchParams", "patch_specials", reflect.TypeFor[patchParams]()},
		{"scan", "AmaxParams", "line_amax", reflect.TypeFor[amaxParams]()},
		{"split", "SplitParams", "split_f32", reflect.TypeFor[splitParams]()},
		{"split", "SplitParams", "split_f64", reflect.TypeFor[splitParams]()},
	} {
		src := string(kernel(tc.file).Code)
		sig := regexp.MustCompile(`(?s)\b` + tc.kernel + `\(([^)]*)\)\s*\{`).FindStringSubmatch(src)
		if sig == nil || !regexp.MustCompile(`(^|,)\s*const `+tc.cstruct+` p$`).MatchString(strings.TrimSpace(sig[1])) {
			t.Errorf("%s.cu: %s does not end its parameters with `const %s p`", tc.file, tc.kernel, tc.cstruct)
		}
		cf, csize := parseCStruct(t, src, tc.cstruct)
		var gf []reflect.StructField
		for f := range tc.goType.Fields() {
			if f.Name != "_" {
				gf = append(gf, f)
			}
		}
		if len(gf) != len(cf) {
			t.Errorf("%v has %d fields, %s.cu's %s %d", tc.goType, len(gf), tc.file, tc.cstruct, len(cf))
		}
		for i := range min(len(gf), len(cf)) {
			g, c := gf[i], cf[i]
			if !strings.EqualFold(g.Name, strings.ReplaceAll(c.name, "_", "")) || g.Type.Kind() != goKinds[c.ctype] ||
				g.Offset != c.off || g.Type.Size() != c.size {
				t.Errorf("%v field %d: %s %v at %d (%d bytes); %s.cu's %s has %s %s at %d (%d bytes)",
					tc.goType, i, g.Name, g.Type, g.Offset, g.Type.Size(), tc.file, tc.cstruct, c.ctype, c.name, c.off, c.size)
			}
		}
		if size := tc.goType.Size(); size != csize {
			t.Errorf("%v is %d bytes, %s.cu's %s %d", tc.goType, size, tc.file, tc.cstruct, csize)
		}
	}
	// The offsets by hand, once, for the parser's sake.
	var p fusedParams
	if unsafe.Offsetof(p.CRowmajor) != 48 || unsafe.Offsetof(p.Ea) != 72 || unsafe.Offsetof(p.FirstOnly) != 96 || unsafe.Sizeof(p) != 104 {
		t.Errorf("fusedParams: c_rowmajor at %d, ea at %d, first_only at %d, size %d; want 48, 72, 96, 104",
			unsafe.Offsetof(p.CRowmajor), unsafe.Offsetof(p.Ea), unsafe.Offsetof(p.FirstOnly), unsafe.Sizeof(p))
	}
	var w wgmmaParams
	if unsafe.Offsetof(w.WordsA) != 56 || unsafe.Sizeof(w) != 72 { // padding after bitems
		t.Errorf("wgmmaParams: wordsA at %d, size %d; want 56, 72", unsafe.Offsetof(w.WordsA), unsafe.Sizeof(w))
	}
}

// requiredMacros returns the macros a kernel file #errors without: those
// named in `#if !defined(X) || …` lines.
func requiredMacros(src string) []string {
	var names []string
	for _, line := range regexp.MustCompile(`(?m)^#if !defined\(.*$`).FindAllString(src, -1) {
		for _, m := range regexp.MustCompile(`defined\((\w+)\)`).FindAllStringSubmatch(line, -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// checkDefines checks that defs set exactly the macros file.cu requires
// (none forgotten, none ignored), each once, that the file gives none of
// them a default, and that moduleOptions passes them all.
func checkDefines(t *testing.T, file, what string, defs []define) {
	t.Helper()
	src := string(kernel(file).Code)
	want := requiredMacros(src)
	var got []string
	for _, d := range defs {
		got = append(got, d.name)
		if regexp.MustCompile(`(?m)^#\s*define\s+` + d.name + `\b`).MatchString(src) {
			t.Errorf("%s.cu defines %s itself; it must come from the Go side", file, d.name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: defines %v; %s.cu requires %v", what, got, file, want)
	}
	opts := moduleOptions(defs)
	if opts[0] != "--fmad=false" || len(opts) != 1+len(defs) {
		t.Errorf("%s: options %q", what, opts)
	}
}

// TestDefines checks that each kernel family's configuration sets exactly
// the macros its file requires (none forgotten, none ignored), each once,
// and that the file gives none of them a default.
func TestDefines(t *testing.T) {
	var plans []*multiword.Plan
	for _, spec := range []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum", "fp16:sum=v2,b=64",
		"double-fp16:sum=pair,b=32,joint=on,group=4", "triple-bf16-fabsum:b=32,joint=products"} {
		p, err := multiword.Lookup(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		plans = append(plans, &p)
	}
	for _, p := range plans {
		for _, la := range []Layout{RowMajor, ColMajor} {
			mc, err := newMMAConfig(p, la, ColMajor)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			checkDefines(t, "fused", p.Name+" on mma.sync", mc.defines())
			for _, presplit := range []bool{false, true} {
				wc, err := newWGMMAConfig(p, la, RowMajor, presplit, !presplit)
				if err != nil {
					t.Fatalf("%s: %v", p.Name, err)
				}
				checkDefines(t, "wgmma", p.Name+" on wgmma", wc.defines())
				if presplit && wc.sf != 0 {
					t.Errorf("%s presplit: SF = %d, wgmma.cu #errors unless 0", p.Name, wc.sf)
				}
			}
		}
	}
}

// TestLaunchShapes checks the configurations' shared memory and grids
// against sums by hand.
func TestLaunchShapes(t *testing.T) {
	p, err := multiword.Lookup("double-fp16-fabsum")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := newMMAConfig(&p, RowMajor, RowMajor)
	if err != nil {
		t.Fatal(err)
	}
	// Two stages of 2 words: A 128 rows × (32+8) k, B 32 k × (64+8) columns, 2 bytes.
	if got, want := mc.shared(), 2*2*(128*40+32*72)*2; got != want {
		t.Errorf("mma.sync shared memory %d, want %d", got, want)
	}
	if g := mc.grid(129, 65); g != [3]uint32{2, 2, 1} || mc.block() != [3]uint32{256, 1, 1} {
		t.Errorf("mma.sync grid %v block %v for 129×65", g, mc.block())
	}
	if p.Low != format.Binary16 {
		t.Fatalf("double-fp16-fabsum has %s words", p.Low.Name())
	}
	wc, err := newWGMMAConfig(&p, RowMajor, ColMajor, true, false)
	if err != nil {
		t.Fatal(err)
	}
	// Presplit, v2 in groups of 16: the fp64 sums of outputs 40..63 of 256
	// consumer threads, then as many stages of A's and B's 2 word tiles
	// of 128×32 fp16 (16 bytes of barriers each) as fit in 227 KiB: 5.
	wide := 256 * (64 - 40) * 8
	if want := 1024 + wide + 5*(2*2*128*32*2+16); wc.shared != want || wc.sw != 5 || wc.sf != 0 {
		t.Errorf("wgmma presplit: %d stages, %d bytes; want 5 stages, %d bytes", wc.sw, wc.shared, want)
	}
	if g, err := wc.grid(1000, 1000, 132); err != nil || g != [3]uint32{64, 1, 1} {
		t.Errorf("wgmma grid for 1000×1000 on 132 SMs: %v, %v; want 64 tiles", g, err)
	}
	if g, _ := wc.grid(4096, 4096, 132); g != [3]uint32{132, 1, 1} {
		t.Errorf("wgmma grid for 4096² on 132 SMs: %v, want 132", g)
	}
	if wc.splitGrid(3<<20) != [3]uint32{1 << 20, 1, 1} || wc.splitBlock() != [3]uint32{128, 1, 1} || wc.block() != [3]uint32{384, 1, 1} {
		t.Errorf("wgmma split grid %v, blocks %v %v", wc.splitGrid(3<<20), wc.splitBlock(), wc.block())
	}
}
