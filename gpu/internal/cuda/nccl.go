package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NCCLFile is NCCL's soname (NCCL 2.x).
const NCCLFile = "libnccl.so.2"

// ErrNoNCCL is wrapped by the error of a machine without NCCL: only work
// on several GPUs needs it.
var ErrNoNCCL = errors.New("no NCCL found")

// NCCLUniqueID is ncclUniqueId: the 128 opaque bytes that one rank makes
// and every rank of a communicator receives.
type NCCLUniqueID struct{ Internal [128]byte }

// NCCL data types and reductions (nccl.h).
const (
	NCCLInt8    = 0
	NCCLInt32   = 2
	NCCLUint64  = 5
	NCCLFloat16 = 6
	NCCLFloat32 = 7
	NCCLFloat64 = 8
	NCCLSum     = 0
	NCCLMax     = 2
)

// ncclInProgress is the status of a call still running on a non-blocking
// communicator, and of an async error check that found nothing yet.
const ncclInProgress = 7

var nccl struct {
	ncclGetVersion        func(v *int32) result
	ncclGetErrorString    func(r result) string
	ncclGetLastError      func(comm uintptr) string
	ncclGetUniqueId       func(id *NCCLUniqueID) result
	ncclCommInitRank      func(comm *uintptr, nranks int32, id NCCLUniqueID, rank int32) result
	ncclCommDestroy       func(comm uintptr) result
	ncclCommAbort         func(comm uintptr) result
	ncclCommGetAsyncError func(comm uintptr, err *result) result
	ncclBroadcast         func(send, recv uintptr, count uintptr, dtype int32, root int32, comm, stream uintptr) result
	ncclAllReduce         func(send, recv uintptr, count uintptr, dtype, op int32, comm, stream uintptr) result
	ncclSend              func(send uintptr, count uintptr, dtype int32, peer int32, comm, stream uintptr) result
	ncclRecv              func(recv uintptr, count uintptr, dtype int32, peer int32, comm, stream uintptr) result
	ncclGroupStart        func() result
	ncclGroupEnd          func() result
	ncclCommSplit         func(comm uintptr, color, key int32, out *uintptr, config *ncclConfig) result
	ncclCommCount         func(comm uintptr, n *int32) result
	ncclCommUserRank      func(comm uintptr, r *int32) result
}

var (
	ncclOnce sync.Once
	ncclErr  error
)

// LoadNCCL loads libnccl.so.2, once.
func LoadNCCL() error {
	ncclOnce.Do(func() { ncclErr = loadNCCL() })
	return ncclErr
}

func loadNCCL() error {
	const hint = "install NCCL 2 (libnccl2) or add its folder to LD_LIBRARY_PATH; one GPU needs no NCCL"
	h, _, err := open(NCCLFile, purego.RTLD_NOW|purego.RTLD_LOCAL, ErrNoNCCL, hint)
	if err != nil {
		return err
	}
	n := &nccl
	if err := bind(NCCLFile, h, []binding{
		fn(&n.ncclGetVersion, "ncclGetVersion"),
		fn(&n.ncclGetErrorString, "ncclGetErrorString"),
		optional(&n.ncclGetLastError, "ncclGetLastError"),
		fn(&n.ncclGetUniqueId, "ncclGetUniqueId"),
		fn(&n.ncclCommInitRank, "ncclCommInitRank"),
		fn(&n.ncclCommDestroy, "ncclCommDestroy"),
		fn(&n.ncclCommAbort, "ncclCommAbort"),
		fn(&n.ncclCommGetAsyncError, "ncclCommGetAsyncError"),
		fn(&n.ncclBroadcast, "ncclBroadcast"),
		fn(&n.ncclAllReduce, "ncclAllReduce"),
		fn(&n.ncclSend, "ncclSend"),
		fn(&n.ncclRecv, "ncclRecv"),
		fn(&n.ncclGroupStart, "ncclGroupStart"),
		fn(&n.ncclGroupEnd, "ncclGroupEnd"),
		fn(&n.ncclCommSplit, "ncclCommSplit"),
		fn(&n.ncclCommCount, "ncclCommCount"),
		fn(&n.ncclCommUserRank, "ncclCommUserRank"),
	}); err != nil {
		return fmt.Errorf("%w: %v", ErrNoNCCL, err)
	}
	return nil
}

// ncclResult names (nccl.h's ncclResult_t).
var ncclResults = map[int32]string{
	0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
	4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress",
}

func ncclCheck(call string, r result) error {
	if r == 0 {
		return nil
	}
	name := ncclResults[r]
	if name == "" {
		name = "ncclUnknownError"
	}
	return &Error{Call: call, Code: int(r), Name: name, Message: nccl.ncclGetErrorString(r)}
}

// NCCLVersion returns NCCL's version as major·10000 + minor·100 + patch.
func NCCLVersion() (int, error) {
	var v int32
	err := ncclCheck("ncclGetVersion", nccl.ncclGetVersion(&v))
	return int(v), err
}

// NCCLGetUniqueID makes a new communicator id (on the rank that creates it).
func NCCLGetUniqueID() (NCCLUniqueID, error) {
	var id NCCLUniqueID
	err := ncclCheck("ncclGetUniqueId", nccl.ncclGetUniqueId(&id))
	return id, err
}

// NCCLCommInitRank joins rank of nranks to the communicator id on the
// current context's device; it returns when every rank has joined.
func NCCLCommInitRank(nranks, rank int, id NCCLUniqueID) (uintptr, error) {
	var c uintptr
	err := ncclCheck("ncclCommInitRank", nccl.ncclCommInitRank(&c, int32(nranks), id, int32(rank)))
	return c, err
}

// NCCLCommDestroy frees a communicator once its work is done.
func NCCLCommDestroy(c uintptr) error { return ncclCheck("ncclCommDestroy", nccl.ncclCommDestroy(c)) }

// NCCLCommAbort frees a communicator at once, cancelling its operations.
func NCCLCommAbort(c uintptr) error { return ncclCheck("ncclCommAbort", nccl.ncclCommAbort(c)) }

// NCCLCommAsyncError returns the error an operation of c met in the
// background (a peer that died, a network failure), or nil.
func NCCLCommAsyncError(c uintptr) error {
	var r result
	if err := ncclCheck("ncclCommGetAsyncError", nccl.ncclCommGetAsyncError(c, &r)); err != nil {
		return err
	}
	if r == ncclInProgress {
		return nil
	}
	return ncclCheck("ncclCommGetAsyncError", r)
}

// NCCLBroadcast copies count elements of root's send to every rank's recv,
// queued on stream.
func NCCLBroadcast(send, recv, count uintptr, dtype, root int, comm, stream uintptr) error {
	return ncclCheck("ncclBroadcast", nccl.ncclBroadcast(send, recv, count, int32(dtype), int32(root), comm, stream))
}

// NCCLAllReduce reduces count elements of send over every rank into recv.
func NCCLAllReduce(send, recv, count uintptr, dtype, op int, comm, stream uintptr) error {
	return ncclCheck("ncclAllReduce", nccl.ncclAllReduce(send, recv, count, int32(dtype), int32(op), comm, stream))
}

// NCCLSend and NCCLRecv are point-to-point transfers; a rank that sends
// and receives in one step groups them (NCCLGroupStart, NCCLGroupEnd).
func NCCLSend(send, count uintptr, dtype, peer int, comm, stream uintptr) error {
	return ncclCheck("ncclSend", nccl.ncclSend(send, count, int32(dtype), int32(peer), comm, stream))
}

func NCCLRecv(recv, count uintptr, dtype, peer int, comm, stream uintptr) error {
	return ncclCheck("ncclRecv", nccl.ncclRecv(recv, count, int32(dtype), int32(peer), comm, stream))
}

func NCCLGroupStart() error { return ncclCheck("ncclGroupStart", nccl.ncclGroupStart()) }
func NCCLGroupEnd() error   { return ncclCheck("ncclGroupEnd", nccl.ncclGroupEnd()) }

// ncclConfig is the head of nccl.h's ncclConfig_t, the fields of NCCL
// 2.17: NCCL reads as many bytes as size says and takes its defaults for
// the fields after them, and for those that hold ncclConfigUndef.
type ncclConfig struct {
	size                                       uint64
	magic, version                             uint32
	blocking, cgaClusterSize, minCTAs, maxCTAs int32
	netName                                    uintptr
}

const ncclConfigUndef = -1 << 31 // NCCL_CONFIG_UNDEF_INT

var _ [40]byte = [unsafe.Sizeof(ncclConfig{})]byte{}

// NCCLCommSplit makes the sub-communicator of comm's ranks of one color,
// ordered by key (NCCL 2.18 and newer). With maxCTAs > 0 its transfers
// use at most that many thread blocks (ncclConfig_t's maxCTAs; the
// environment's NCCL_MAX_CTAS overrides it); else it takes the parent's
// configuration.
func NCCLCommSplit(comm uintptr, color, key, maxCTAs int) (uintptr, error) {
	var c uintptr
	err := ncclCheck("ncclCommSplit", nccl.ncclCommSplit(comm, int32(color), int32(key), &c, splitConfig(maxCTAs)))
	return c, err
}

// splitConfig is the configuration of a split with at most maxCTAs thread
// blocks, or nil (the parent's) when maxCTAs ≤ 0.
func splitConfig(maxCTAs int) *ncclConfig {
	if maxCTAs <= 0 {
		return nil
	}
	return &ncclConfig{size: uint64(unsafe.Sizeof(ncclConfig{})), magic: 0xcafebeef, version: 21700, // NCCL_VERSION(2, 17, 0)
		blocking: ncclConfigUndef, cgaClusterSize: ncclConfigUndef, minCTAs: ncclConfigUndef, maxCTAs: int32(maxCTAs)}
}

// NCCLCommShape returns a communicator's size and the caller's rank in it.
func NCCLCommShape(comm uintptr) (size, rank int, err error) {
	var n, r int32
	err = errors.Join(ncclCheck("ncclCommCount", nccl.ncclCommCount(comm, &n)),
		ncclCheck("ncclCommUserRank", nccl.ncclCommUserRank(comm, &r)))
	return int(n), int(r), err
}

// the struct must be passed by value as 128 bytes on the stack (System V
// MEMORY class), which purego does for structs over 64 bytes.
var _ [128]byte = [unsafe.Sizeof(NCCLUniqueID{})]byte{}
