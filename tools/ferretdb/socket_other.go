//go:build !unix

package main

import "errors"

var errNoUnixSockets = errors.New("Unix domain sockets are not supported on this platform; use --listen-addr")

func checkSocketPath(string) error { return errNoUnixSockets }

func prepareSocket(string) error { return errNoUnixSockets }
