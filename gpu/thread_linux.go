package gpu

import "syscall"

// threadID is the calling OS thread's id (never 0).
func threadID() int64 { return int64(syscall.Gettid()) }
