//go:build linux

package main

import "syscall"

// setParentDeathSignal asks the kernel to send SIGTERM when the parent dies.
// It is called from init, i.e. on the process's
// main thread, which never exits while the process lives.
func setParentDeathSignal() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// parentGone reports whether the parent died before the death signal was set
// (we were then re-parented to init).
func parentGone() bool {
	return syscall.Getppid() == 1
}
