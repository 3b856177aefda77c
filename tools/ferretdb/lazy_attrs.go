package main

import (
	"context"
	"log/slog"
	"slices"
)

// lazyAttrs keeps a logger's attributes and formats them only for a record that is
// written. FerretDB's SQL layer (internal/util/fsql) runs `logger.With(args…)` twice
// for every statement, to log it at DEBUG, with the statement's arguments: whole
// documents as JSON text. slog's text handler formats (quotes) attributes as soon as
// they are added, logged or not, which was a fifth of the launcher's CPU under chat
// turns (a Go CPU profile: strconv.AppendQuote under TextHandler.WithAttrs).
type lazyAttrs struct {
	parent slog.Handler
	attrs  []slog.Attr
}

func withLazyAttrs(parent slog.Handler, as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return parent
	}
	if l, ok := parent.(*lazyAttrs); ok {
		return &lazyAttrs{l.parent, append(slices.Clip(l.attrs), as...)}
	}
	return &lazyAttrs{parent, slices.Clone(as)}
}

func (l *lazyAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return l.parent.Enabled(ctx, level)
}

func (l *lazyAttrs) Handle(ctx context.Context, r slog.Record) error {
	return l.parent.WithAttrs(l.attrs).Handle(ctx, r)
}

func (l *lazyAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return withLazyAttrs(l, as)
}

func (l *lazyAttrs) WithGroup(name string) slog.Handler {
	return l.parent.WithAttrs(l.attrs).WithGroup(name)
}
