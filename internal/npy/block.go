package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// Data move between a file and the caller's []float64 in large blocks:
// straight through the slice's memory when the bytes on disk are the
// host's float64s, else through a cache-sized buffer, decoded or encoded
// there. The per-element decoding (convertAs) stays for the rest.

// blockBytes is the unit in which data are read into and written from the
// caller's slice: large, for few system calls, but bounded, so that data
// of unknown length are taken in as they come. A variable, so that tests
// can make it small.
var blockBytes = 8 << 20

// convBytes is the unit in which data that need decoding or encoding pass
// through a buffer: small enough to stay in cache. Variable as blockBytes.
var convBytes = 256 << 10

// maxReaders bounds the goroutines of readDataAt: a few keep a disk's
// queue full and spread the copying and page faults over cores.
const maxReaders = 8

// readDataAt reads len(dst) elements described by h from ra, from byte
// off on, in blocks on several goroutines. From the page cache, a read is
// a copy and the page faults of fresh memory, which one core does at a
// fraction of the memory's speed; a disk is kept busier with more reads in
// flight. An error is that of the lowest block that failed, as a
// sequential read would report it.
func readDataAt(ra io.ReaderAt, off int64, h *header, dst []float64) error {
	per := blockBytes / h.elemSize
	if !h.native64() {
		per = max(1, convBytes/h.elemSize)
	}
	nb := (len(dst) + per - 1) / per
	var (
		mu      sync.Mutex
		next    int
		bad     = nb // the lowest block that failed
		got     int
		firstEr error
		wg      sync.WaitGroup
	)
	take := func() int { // the next block to read, or -1
		mu.Lock()
		defer mu.Unlock()
		if next >= bad {
			return -1
		}
		next++
		return next - 1
	}
	for range min(runtime.GOMAXPROCS(0), maxReaders, nb) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for b := take(); b >= 0; b = take() {
				lo, hi := b*per, min((b+1)*per, len(dst))
				sr := io.NewSectionReader(ra, off+int64(lo)*int64(h.elemSize), int64(hi-lo)*int64(h.elemSize))
				k, err := h.fill(sr, dst[lo:hi], lo, &scratch)
				if err != nil {
					mu.Lock()
					if b < bad {
						bad, got, firstEr = b, lo+k, err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return dataError(firstEr, len(dst), h.dtype, got)
	}
	return nil
}

// fill reads len(dst) elements from r into dst; first is the index of
// dst[0] in the array, for error messages. When the file's bytes are the
// host's float64s it reads straight into dst's memory, in large blocks;
// otherwise it decodes block by block through *scratch. On error it
// returns how many elements of dst were read whole.
func (h *header) fill(r io.Reader, dst []float64, first int, scratch *[]byte) (int, error) {
	if h.native64() {
		for done := 0; done < len(dst); {
			k := min(len(dst)-done, blockBytes/8)
			got, err := io.ReadFull(r, asBytes(dst[done:done+k]))
			if err != nil {
				return done + got/8, readError(err)
			}
			done += k
		}
		return len(dst), nil
	}
	per := max(1, convBytes/h.elemSize)
	if len(*scratch) < min(len(dst), per)*h.elemSize {
		*scratch = make([]byte, min(len(dst), per)*h.elemSize)
	}
	for done := 0; done < len(dst); {
		k := min(len(dst)-done, per)
		b := (*scratch)[:k*h.elemSize]
		if got, err := io.ReadFull(r, b); err != nil {
			return done + got/h.elemSize, readError(err)
		}
		if err := h.convert(b, dst[done:done+k], first+done); err != nil {
			return done, err
		}
		done += k
	}
	return len(dst), nil
}

// readError is io.ErrUnexpectedEOF for an early end, else err explained.
func readError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading data: %w", err)
}

// dataError words an error from fill: an early end names the count of
// elements read, got, of the n wanted; other errors pass through.
func dataError(err error, n int, dtype string, got int) error {
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("truncated data: want %d %s elements, got %d: %w", n, dtype, got, err)
	}
	return err
}

// native64: the data are little-endian float64s and so is the host.
func (h *header) native64() bool {
	return h.kind == 'f' && h.elemSize == 8 && h.order == binary.LittleEndian && hostLittleEndian
}

// asBytes is the memory of x as bytes, for reading and writing it whole.
func asBytes[T float32 | float64](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*int(unsafe.Sizeof(x[0])))
}

// transpose writes into dst, row-major, the rows×cols matrix that src holds
// in column-major order: dst[i*cols+j] = src[j*rows+i]. It goes tile by
// tile so that both sides stay in cache, not one cache line per element.
func transpose(dst, src []float64, rows, cols int) {
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for j := j0; j < j1; j++ {
				col := src[j*rows+i0 : j*rows+i1]
				for i, v := range col {
					dst[(i0+i)*cols+j] = v
				}
			}
		}
	}
}

// writeNative writes data as little-endian float64 (elemSize 8), straight
// from its memory in large blocks, or float32 (4), converted a cache-sized
// block at a time through *f32; only on a little-endian host are those the
// file's bytes.
func writeNative(w io.Writer, data []float64, elemSize int, f32 *[]float32) error {
	if elemSize == 8 {
		for len(data) > 0 {
			k := min(len(data), blockBytes/8)
			if _, err := w.Write(asBytes(data[:k])); err != nil {
				return err
			}
			data = data[k:]
		}
		return nil
	}
	if len(*f32) < min(len(data), convBytes/4) {
		*f32 = make([]float32, min(len(data), convBytes/4))
	}
	for len(data) > 0 {
		k := min(len(data), len(*f32))
		b := (*f32)[:k]
		for i, v := range data[:k] {
			b[i] = float32(v) // to nearest, ties to even, as NumPy rounds
		}
		if _, err := w.Write(asBytes(b)); err != nil {
			return err
		}
		data = data[k:]
	}
	return nil
}
