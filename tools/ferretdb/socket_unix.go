//go:build unix

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// maxSocketPath is the longest socket path the kernel accepts: sun_path less
// its terminating NUL (107 bytes on Linux, 103 on macOS and the BSDs).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// checkSocketPath validates a --listen-unix path before anything is created.
func checkSocketPath(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("--listen-unix %q must be an absolute path", path)
	}
	if strings.ContainsAny(path, "\x00\n\r") {
		return fmt.Errorf("--listen-unix %q must not contain NUL or line breaks", path)
	}
	if filepath.Clean(path) != path || filepath.Base(path) == "/" {
		return fmt.Errorf("--listen-unix %q must be a clean path to a file", path)
	}
	if len(path) > maxSocketPath {
		return fmt.Errorf("--listen-unix path is %d bytes, longer than the %d a Unix socket path may have: %s", len(path), maxSocketPath, path)
	}
	return nil
}

// prepareSocket makes the socket's directory private (created 0700, owned by
// this user, not a symlink; a looser mode on our own directory is tightened)
// and clears a socket file left behind by a server that died. A socket that
// still answers belongs to a running server and is left alone.
func prepareSocket(path string) error {
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot create socket directory: %s", plainPathErr(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("cannot use socket directory: %s", plainPathErr(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory (symbolic links are refused)", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("cannot read the owner of socket directory %s", dir)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("socket directory %s belongs to another user (uid %d); remove it or choose another path", dir, st.Uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("cannot make socket directory private: %s", plainPathErr(err))
		}
	}

	fi, err = os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot use socket: %s", plainPathErr(err))
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("cannot listen on %s: the path exists and is not a socket", path)
	}
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("cannot listen on %s: another server is already listening there", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot check socket %s: %s", path, cleanErr(err))
	}
	// Nobody listens: a leftover from a crash.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot remove stale socket: %s", plainPathErr(err))
	}
	return nil
}
