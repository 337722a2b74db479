package engine

import "context"

// Pipelined statements. On PostgreSQL every statement of a unit was a
// network round trip, most of them writes whose result the unit never
// reads (a row insert, the log's insert, the applied changes'). A
// statement run with a context from Later is such a write: the backend's
// driver may keep it and send it with the connection's next statement of
// another kind, in one round trip (engine/pg: the driver's queue), and
// its error surfaces there. SQLite's driver runs it at once (no round
// trips to save). The writer makes sure a unit's kept statements are sent
// before the unit counts as succeeded: its RELEASE sends them, and a bare
// unit (the first of its transaction) ends with FlushLater; a unit rolled
// back has its kept statements dropped, never sent.

// Pipe is how a statement's context asks the driver to run it.
type Pipe int

const (
	// PipeNow runs the statement now, with what waits before it.
	PipeNow Pipe = iota
	// PipeLater lets the driver keep the statement for its next one.
	PipeLater
	// PipeFlush sends only what waits: the statement is a stand-in.
	PipeFlush
	// PipeLaterIfIdle keeps the statement only when nothing waits and
	// the transaction is sound (no statement of it failed): a statement
	// that cannot fail then (a RELEASE); otherwise it runs now, sending
	// what waits, and answers for it.
	PipeLaterIfIdle
	// PipeFailed sends nothing and answers the error of a kept statement
	// that failed, if one did: the statement is a stand-in.
	PipeFailed
	// PipeAfterCommit keeps the statement to send right after the
	// transaction's COMMIT, in the COMMIT's round trip, as a statement of
	// its own (not in the transaction); it runs only when the COMMIT
	// succeeded, and its answer goes to the context's AfterCommitAnswer.
	PipeAfterCommit
	// PipeBeforeCommit keeps the statement to send last before the
	// transaction's COMMIT, in the transaction and in the COMMIT's round
	// trip; its one integer answers to the context's BeforeCommitAnswer
	// once the COMMIT succeeded, and its error is the COMMIT's (the
	// transaction does not commit).
	PipeBeforeCommit
)

// BeforeCommitAnswer is what a statement sent last before a COMMIT
// (PipeBeforeCommit) answered: its one integer, set when the COMMIT
// succeeded. Kept is set when the driver kept the statement: a driver
// that keeps none ran it at once, its answer unread.
type BeforeCommitAnswer struct {
	Kept  bool
	Value int64
}

type beforeKey struct{}

// BeforeCommit marks ctx's statement PipeBeforeCommit, its answer to a.
func BeforeCommit(ctx context.Context, a *BeforeCommitAnswer) context.Context {
	return answering(ctx, PipeBeforeCommit, beforeKey{}, a)
}

// BeforeCommitOf is where ctx's statement sent before a COMMIT answers
// (nil when it is not one).
func BeforeCommitOf(ctx context.Context) *BeforeCommitAnswer {
	return answerIn[BeforeCommitAnswer](ctx, beforeKey{})
}

// AfterCommitAnswer is what a statement sent after a COMMIT
// (PipeAfterCommit) answered: its one integer, or its error. Sent is
// false when it was not sent (the COMMIT failed, or the driver sends
// nothing after a COMMIT: SQLite's); its error never is the COMMIT's.
type AfterCommitAnswer struct {
	Sent  bool
	Value int64
	Err   error
}

type answerKey struct{}

// AfterCommit marks ctx's statement PipeAfterCommit, its answer to a.
func AfterCommit(ctx context.Context, a *AfterCommitAnswer) context.Context {
	return answering(ctx, PipeAfterCommit, answerKey{}, a)
}

// AfterCommitOf is where ctx's statement sent after a COMMIT answers (nil
// when it is not one).
func AfterCommitOf(ctx context.Context) *AfterCommitAnswer {
	return answerIn[AfterCommitAnswer](ctx, answerKey{})
}

// answering marks ctx's statement p, its answer to a (under key).
func answering(ctx context.Context, p Pipe, key, a any) context.Context {
	return context.WithValue(context.WithValue(ctx, pipeKey{}, p), key, a)
}

// answerIn is where ctx's statement answers (under key), or nil.
func answerIn[T any](ctx context.Context, key any) *T {
	a, _ := ctx.Value(key).(*T)
	return a
}

type pipeKey struct{}

// Later marks ctx's statement as one whose result nobody reads (PipeLater).
func Later(ctx context.Context) context.Context { return context.WithValue(ctx, pipeKey{}, PipeLater) }

// laterIfIdle marks ctx's statement PipeLaterIfIdle.
func laterIfIdle(ctx context.Context) context.Context {
	return context.WithValue(ctx, pipeKey{}, PipeLaterIfIdle)
}

// Piped is how ctx asks its statement to be run.
func Piped(ctx context.Context) Pipe {
	p, _ := ctx.Value(pipeKey{}).(Pipe)
	return p
}

// flushStandIn is the statement FlushLater runs to send what waits: a
// driver that keeps nothing runs it, for nothing.
const flushStandIn = `SELECT 1`

// ExecLater runs a statement of the unit whose result the unit does not
// read (no rows affected, no returned row): on PostgreSQL it is sent with
// the unit's next statement (Tx.ExecContext, QueryContext, …) or at the
// unit's end, in one round trip, and its error surfaces there, failing
// the unit as its own would; on SQLite it runs now. A statement whose
// failure the unit means to handle itself must not run later.
func (tx *Tx) ExecLater(ctx context.Context, query string, args ...any) error {
	if err := tx.flushLater(ctx); err != nil {
		return err
	}
	return tx.execLater(ctx, query, args...)
}

// execLater is ExecLater without the inserts waiting (flushLater's own).
func (tx *Tx) execLater(ctx context.Context, query string, args ...any) error {
	_, err := tx.execCached(tx.laterCtx(ctx), query, args...)
	return err
}

// laterCtx is ctx marked Later on a backend whose driver keeps statements.
func (tx *Tx) laterCtx(ctx context.Context) context.Context {
	if tx.DB.Dialect == nil {
		return ctx
	}
	tx.pending = true
	return Later(ctx)
}

// FlushLater sends the unit's statements waiting (ExecLater) and returns
// the first one's error; nothing when none waits.
func (tx *Tx) FlushLater(ctx context.Context) error {
	if !tx.pending {
		return nil
	}
	tx.pending = false
	_, err := tx.Tx.ExecContext(context.WithValue(ctx, pipeKey{}, PipeFlush), flushStandIn)
	return err
}

// execLaterOnce is execLater of a statement not prepared (its text
// varies with the batch).
func (tx *Tx) execLaterOnce(ctx context.Context, query string, args ...any) error {
	_, err := tx.Tx.ExecContext(tx.laterCtx(ctx), query, args...)
	return err
}

// keptFailure is the error a unit that failed with err returns: the
// error of its statement run later that failed, if one did (the cause:
// the unit's own err may be a later statement's, failing after it, or
// wrap it in words the classifiers do not read), else err.
func (tx *Tx) keptFailure(ctx context.Context, err error) error {
	if !tx.pending {
		return err
	}
	if _, kept := tx.Tx.ExecContext(context.WithValue(ctx, pipeKey{}, PipeFailed), flushStandIn); kept != nil {
		return kept
	}
	return err
}
