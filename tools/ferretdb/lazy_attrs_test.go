package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// countingHandler counts WithAttrs calls of the handler it wraps.
type countingHandler struct {
	slog.Handler
	withAttrs *int
}

func (c countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	*c.withAttrs++
	return countingHandler{c.Handler.WithAttrs(as), c.withAttrs}
}

func newTestLogger(level slog.Level) (*slog.Logger, *bytes.Buffer, *int) {
	var out bytes.Buffer
	calls := 0
	text := slog.NewTextHandler(&out, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(&quietResponses{countingHandler{text, &calls}}), &out, &calls
}

func TestLazyAttrsSkipsWhatIsNotLogged(t *testing.T) {
	logger, out, calls := newTestLogger(slog.LevelInfo)
	doc := strings.Repeat(`{"_id":"x","content":"a \"quoted\" text"}`, 100)
	for i := 0; i < 10; i++ {
		logger.With(slog.Any("args", []any{doc})).DebugContext(context.Background(), ">>> UPDATE")
	}
	if *calls != 0 || out.Len() != 0 {
		t.Fatalf("a DEBUG record at INFO formatted its attributes: %d WithAttrs calls, output %q", *calls, out.String())
	}
}

func TestLazyAttrsWritesWhatIsLogged(t *testing.T) {
	logger, out, _ := newTestLogger(slog.LevelDebug)
	logger.With("a", 1).With(slog.String("b", "two words")).Debug("hello", "c", true)
	logger.With("conn", 7).WithGroup("g").Info("grouped", "d", 4)
	got := out.String()
	for _, want := range []string{
		`level=DEBUG msg=hello a=1 b="two words" c=true`,
		`level=INFO msg=grouped conn=7 g.d=4`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output %q lacks %q", got, want)
		}
	}
}

func TestLazyAttrsKeepsTheDemotionOfResponseDumps(t *testing.T) {
	logger, out, _ := newTestLogger(slog.LevelWarn)
	logger.With("conn", 1).Warn("Response message: {ok: 0}")
	logger.With("conn", 1).Warn("a real warning")
	got := out.String()
	if strings.Contains(got, "Response message") || !strings.Contains(got, `level=WARN msg="a real warning" conn=1`) {
		t.Fatalf("output %q", got)
	}
}
