package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Commands are the hub's requests to an edge to run an operation there:
// the hub routes money operations on a store's orders to the store, which
// serializes them (package kassa.dev/shared/forward). Only the hub can
// publish on an edge's command subject (EdgePermissions grants the edge
// no publish right on it). The edge answers on a subject under its own
// answer prefix, which the hub chooses per command and subscribes to
// before sending: NATS's usual _INBOX replies cannot cross the leaf link,
// since the edge may not publish there (NATS's response permission is
// enforced at the hub, but the edge's server never learns of the hub's
// inbox interest).

// CommandSubject is where the hub sends an edge its commands.
func (id Identity) CommandSubject() string { return "kassa.cmd." + id.suffix() }

// AnswerPrefix is under which an edge answers commands.
func (id Identity) AnswerPrefix() string { return "kassa.ans." + id.suffix() }

// Command is one operation for an edge to run, as the actor who asked the
// hub. Op, Actor and Input are the caller's to define.
type Command struct {
	Op    string          `json:"op"`
	Actor json.RawMessage `json:"actor"`
	Input json.RawMessage `json:"input"`
	// IdempotencyKey is the client's Idempotency-Key, if it sent one: the
	// edge answers a repeated key with its first answer.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// CommandReply is an edge's answer: Result or Error, each the caller's to
// define.
type CommandReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Errors of SendCommand.
var (
	// ErrEdgeOffline: no edge listens on the subject (the leaf link is
	// down); the command was not delivered.
	ErrEdgeOffline = errors.New("link: the edge is not connected")
	// ErrNoAnswer: the command went out but no answer came in time; the
	// edge may or may not have run it.
	ErrNoAnswer = errors.New("link: the edge did not answer in time")
)

// SendCommand sends cmd to the edge id over nc (the hub's connection) and
// waits for its answer until ctx is done. It returns ErrEdgeOffline at
// once when no edge listens (NATS's no-responders status).
func SendCommand(ctx context.Context, nc *nats.Conn, id Identity, cmd Command) (*CommandReply, error) {
	b, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	reply := id.AnswerPrefix() + "." + nuid.Next()
	sub, err := nc.SubscribeSync(reply)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	sub.AutoUnsubscribe(1)
	if err := nc.PublishRequest(id.CommandSubject(), reply, b); err != nil {
		return nil, fmt.Errorf("link: command %s to %s: %w", cmd.Op, id.Node, err)
	}
	m, err := sub.NextMsgWithContext(ctx)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, ErrEdgeOffline
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, ErrNoAnswer
	case err != nil:
		return nil, fmt.Errorf("link: command %s to %s: %w", cmd.Op, id.Node, err)
	case len(m.Data) == 0 && m.Header.Get("Status") == "503":
		return nil, ErrEdgeOffline
	}
	var rep CommandReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return nil, fmt.Errorf("link: command %s: bad reply: %w", cmd.Op, err)
	}
	return &rep, nil
}

// ServeCommands answers the commands sent to the edge id on nc (the
// edge's connection to its own server), each in a goroutine of its own,
// until the returned subscription is unsubscribed.
func ServeCommands(nc *nats.Conn, id Identity, run func(ctx context.Context, cmd Command) CommandReply) (*nats.Subscription, error) {
	sub, err := nc.Subscribe(id.CommandSubject(), func(m *nats.Msg) {
		go func() {
			var rep CommandReply
			var cmd Command
			if err := json.Unmarshal(m.Data, &cmd); err != nil {
				rep.Error, _ = json.Marshal(map[string]string{"kind": "bad-request", "message": "malformed command"})
			} else {
				rep = run(context.Background(), cmd)
			}
			b, _ := json.Marshal(rep)
			m.Respond(b)
		}()
	})
	if err != nil {
		return nil, err
	}
	return sub, nc.Flush()
}
