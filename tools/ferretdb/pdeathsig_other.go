//go:build !linux

package main

// Parent-death signalling is Linux-only; elsewhere rely on --exit-on-stdin-eof.
func setParentDeathSignal() error { return nil }

func parentGone() bool { return false }
