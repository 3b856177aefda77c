// Command ferretdb-launcher runs an embedded FerretDB 1.x (SQLite backend)
// as a MongoDB-compatible server for local development.
//
// It listens either on a Unix domain socket (--listen-unix, in a directory only
// this OS user can enter) or on a loopback TCP port (--listen-addr). It prints
// exactly one line to stdout, "ready <host:port>" or "ready <socket path>",
// once the listener accepts connections; everything else (logs, errors) goes
// to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

const prog = "ferretdb-launcher"

// shutdownTimeout bounds how long we wait for FerretDB to close connections
// and the SQLite backend after a stop request. FerretDB itself gives connected
// clients up to 3 s to disconnect.
const shutdownTimeout = 10 * time.Second

// fail prints one clear line to stderr and exits non-zero.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, prog+": "+format+"\n", args...)
	os.Exit(code)
}

// init runs on the process's main OS thread (the runtime locks it there during
// initialisation); that thread lives as long as the process, so the
// per-thread parent-death setting stays in force.
func init() {
	// Never outlive the parent: ask the kernel for SIGTERM when it dies,
	// and bail out if it is already gone.
	if err := setParentDeathSignal(); err != nil {
		fail(1, "cannot set parent death signal: %s", err)
	}
	if parentGone() {
		fail(1, "parent process is gone, not starting")
	}
}

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP `host:port` to listen on (port 0 picks a free port); not used with --listen-unix")
	listenUnix := flag.String("listen-unix", "", "absolute `path` of a Unix domain socket to listen on instead of TCP; its directory is created 0700 and must belong to this user")
	allowNonLoopback := flag.Bool("allow-non-loopback", false, "allow --listen-addr on a non-loopback host")
	dataDir := flag.String("data-dir", "", "`directory` for the SQLite database files (required; created if missing)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn or error")
	exitOnStdinEOF := flag.Bool("exit-on-stdin-eof", false, "shut down when stdin (a pipe or socket) reaches EOF")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: %s --data-dir DIR [flags]\n", prog)
		flag.PrintDefaults()
	}
	flag.Parse()

	if flag.NArg() > 0 {
		fail(2, "unexpected argument %q", flag.Arg(0))
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fail(2, "invalid --log-level %q (want debug, info, warn or error)", *logLevel)
	}
	logger := slog.New(&quietResponses{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})})

	var addr string
	if *listenUnix != "" {
		if flagGiven("listen-addr") || flagGiven("allow-non-loopback") {
			fail(2, "use either --listen-unix or --listen-addr, not both")
		}
		if err := checkSocketPath(*listenUnix); err != nil {
			fail(2, "%s", err)
		}
	} else {
		var err error
		if addr, err = checkListenAddr(*listenAddr, *allowNonLoopback); err != nil {
			fail(2, "%s", err)
		}
	}

	if *dataDir == "" {
		fail(2, "--data-dir is required")
	}
	dir, err := prepareDataDir(*dataDir)
	if err != nil {
		fail(1, "%s", err)
	}

	// Pre-flight the port or socket so "in use" is reported plainly; FerretDB
	// would otherwise wrap the error with internal source locations.
	if *listenUnix != "" {
		if err := prepareSocket(*listenUnix); err != nil {
			fail(1, "%s", err)
		}
	} else if err := checkPortFree(addr); err != nil {
		fail(1, "%s", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	if *exitOnStdinEOF {
		ctx = watchStdin(ctx)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: addr, Unix: *listenUnix},
		Logger:   logger,
		Handler:  "sqlite",
		// A directory URI; FerretDB keeps one <database>.sqlite file per database in it.
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		fail(1, "cannot start FerretDB: %s", cleanErr(err))
	}

	done := make(chan struct{})
	go func() {
		_ = f.Run(ctx) // always returns nil; closes listener, connections and backend
		close(done)
	}()

	// The listener is already bound by New; connections queue until Run accepts them.
	if *listenUnix != "" {
		// The 0700 directory already keeps other users out; the socket itself says so too.
		if err := os.Chmod(*listenUnix, 0o600); err != nil {
			fail(1, "cannot restrict socket %s: %s", *listenUnix, plainPathErr(err))
		}
		fmt.Fprintf(os.Stdout, "ready %s\n", *listenUnix)
	} else {
		fmt.Fprintf(os.Stdout, "ready %s\n", hostPort(f.MongoDBURI()))
	}

	select {
	case <-done:
		return
	case <-ctx.Done():
	}

	shuttingDown.Store(true)
	stop() // a second SIGTERM/SIGINT now terminates immediately
	select {
	case <-done:
	case <-time.After(shutdownTimeout):
		fail(1, "shutdown did not finish within %s", shutdownTimeout)
	}
}

// flagGiven reports whether the named flag was set on the command line.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

// hostPort extracts "host:port" from FerretDB's "mongodb://host:port/" URI.
func hostPort(uri string) string {
	s := strings.TrimPrefix(uri, "mongodb://")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}

// checkListenAddr validates host:port and refuses non-loopback hosts unless allowed.
func checkListenAddr(addr string, allowNonLoopback bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("invalid --listen-addr %q: %s", addr, err)
	}
	if port == "" {
		return "", fmt.Errorf("invalid --listen-addr %q: missing port", addr)
	}
	if allowNonLoopback {
		return addr, nil
	}
	if host == "localhost" {
		return addr, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return addr, nil
	}
	shown := fmt.Sprintf("%q", host)
	if host == "" {
		shown = "(all interfaces)"
	}
	return "", fmt.Errorf("refusing to listen on non-loopback host %s (use --allow-non-loopback to override)", shown)
}

// prepareDataDir makes dir absolute, creates it if missing and checks it is writable.
func prepareDataDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("--data-dir is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("invalid --data-dir %q: %s", dir, err)
	}
	// The directory becomes part of an SQLite "file:" URI, where these characters have meaning.
	if strings.ContainsAny(abs, "?#%") {
		return "", fmt.Errorf("--data-dir %q must not contain '?', '#' or '%%'", abs)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("cannot create data dir: %s", plainPathErr(err))
	}
	// FerretDB only creates database files on first write, so probe now
	// to report an unwritable directory at startup rather than on first insert.
	probe, err := os.CreateTemp(abs, ".write-probe-*")
	if err != nil {
		return "", fmt.Errorf("data dir %s is not writable: %s", abs, plainPathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}

func plainPathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// checkPortFree reports a clear error if the TCP address cannot be bound.
func checkPortFree(addr string) error {
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) && errors.Is(se.Err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: address already in use", addr)
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return fmt.Errorf("cannot listen on %s: %s", addr, oe.Err)
		}
		return fmt.Errorf("cannot listen on %s: %s", addr, err)
	}
	return l.Close()
}

// internalLoc matches FerretDB's lazyerrors prefixes like "[listener.go:101 clientconn.Listen] ".
var internalLoc = regexp.MustCompile(`\[[^\]\s]+\.go:\d+ [^\]]*\] ?`)

func cleanErr(err error) string {
	s := internalLoc.ReplaceAllString(err.Error(), "")
	return strings.Join(strings.Fields(s), " ") // keep it on one line
}

// watchStdin returns a context canceled when stdin, if it is a pipe or a
// socket (Node.js "pipe" stdio is a socketpair), reaches EOF or fails.
// For other stdin kinds (tty, /dev/null, file) it does nothing.
func watchStdin(parent context.Context) context.Context {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return parent
	}
	ctx, cancel := context.WithCancel(parent)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx
}

// quietResponses demotes FerretDB's per-response dumps from WARN to INFO.
// FerretDB logs every command that answers ok:0 (e.g. "no such command:
// 'endSessions'", sent by drivers on close) as a multi-line wire dump at WARN;
// the client already receives that error, so it is noise at the default level.
// While shutting down, the expected "Connection stopped ... i/o timeout" of
// clients that were still connected is demoted too.
type quietResponses struct{ slog.Handler }

var shuttingDown atomic.Bool

func (h *quietResponses) Enabled(ctx context.Context, l slog.Level) bool {
	// Let WARN records through to Handle, which may demote and re-check them.
	return h.Handler.Enabled(ctx, l) || l == slog.LevelWarn
}

func (h *quietResponses) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && (isResponseDump(r.Message) ||
		(shuttingDown.Load() && r.Message == "Connection stopped")) {
		r.Level = slog.LevelInfo
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *quietResponses) WithAttrs(as []slog.Attr) slog.Handler {
	return &quietResponses{withLazyAttrs(h.Handler, as)}
}

func (h *quietResponses) WithGroup(name string) slog.Handler {
	return &quietResponses{h.Handler.WithGroup(name)}
}

func isResponseDump(msg string) bool {
	return strings.HasPrefix(msg, "Response header: ") || strings.HasPrefix(msg, "Response message:") ||
		strings.HasPrefix(msg, "Proxy response header: ") || strings.HasPrefix(msg, "Proxy response message:")
}
