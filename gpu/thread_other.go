//go:build !linux

package gpu

// threadID is 0 where the thread's id is not read: a job's calls to do
// then each make their own trip to the worker (CUDA runs on Linux).
func threadID() int64 { return 0 }
