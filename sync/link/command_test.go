package link

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/sync/wait"
)

// TestCommandsReachTheirEdgeAndItAnswers: a command the hub sends to an
// edge crosses the leaf link with the permissions the hub grants the edge
// and the edge's answer comes back; a command for another edge never
// reaches it; the edge cannot answer in another edge's name; and once
// the edge is gone a command fails at once as offline.
func TestCommandsReachTheirEdgeAndItAnswers(t *testing.T) {
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	other := Identity{Org: "orgA", Location: "loc1", Node: "node2"}
	hub, edge := mustLeafPair(t, me)
	hc, _ := hub.Connect("hub", "tok")
	defer hc.Close()
	ec, _ := edge.Connect("edge", "", nats.CustomInboxPrefix(me.InboxPrefix()))
	defer ec.Close()

	foreign := make(chan string, 10)
	ec.Subscribe(other.CommandSubject(), func(m *nats.Msg) { foreign <- m.Subject })
	snoop := make(chan string, 10)
	watcher, _ := hub.Connect("watcher", "tok") // a connection of its own: no-responders goes to the sender's own subscription
	defer watcher.Close()
	watcher.Subscribe("kassa.ans.>", func(m *nats.Msg) { snoop <- string(m.Data) })
	watcher.Flush()
	if _, err := ServeCommands(ec, me, func(ctx context.Context, cmd Command) CommandReply {
		ec.Publish(other.AnswerPrefix()+".x", []byte("forged")) // another edge's answers: refused
		r, _ := json.Marshal(map[string]string{"op": cmd.Op, "key": cmd.IdempotencyKey, "actor": string(cmd.Actor)})
		return CommandReply{Result: r}
	}); err != nil {
		t.Fatal(err)
	}
	var rep *CommandReply
	var err error
	wait.For(t, 5*time.Second, "the edge's interest at the hub", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		rep, err = SendCommand(ctx, hc, me, Command{Op: "refund", Actor: json.RawMessage(`"u1"`), Input: json.RawMessage(`{}`), IdempotencyKey: "k1"})
		return err == nil
	})
	var got map[string]string
	json.Unmarshal(rep.Result, &got)
	if got["op"] != "refund" || got["key"] != "k1" || got["actor"] != `"u1"` {
		t.Fatalf("reply %s", rep.Result)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := SendCommand(ctx, hc, other, Command{Op: "refund"}); err != ErrEdgeOffline {
		t.Fatalf("a command for another edge: %v, want ErrEdgeOffline", err)
	}
	// A sentinel on the same path as the forged publish: the edge's own
	// answer to a second command.
	if _, err := SendCommand(ctx, hc, me, Command{Op: "again"}); err != nil {
		t.Fatal(err)
	}
	// The hub's catch-all answer subscription sees, in the edge's order,
	// anything the edge published there: up to the second answer, no
	// forged one.
	wait.For(t, 5*time.Second, "the second answer", func() bool {
		for {
			select {
			case d := <-snoop:
				if d == "forged" {
					t.Fatal("the edge answered in another edge's name")
				}
				if strings.Contains(d, `again`) {
					return true
				}
			default:
				return false
			}
		}
	})
	select {
	case s := <-foreign:
		t.Fatalf("the edge received another edge's command on %s", s)
	default:
	}
	edge.Shutdown()
	wait.For(t, 5*time.Second, "the hub to see the edge go", func() bool { return !hub.LeafConnected() })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel2()
	if _, err := SendCommand(ctx2, hc, me, Command{Op: "refund"}); err != ErrEdgeOffline {
		t.Fatalf("a command to a gone edge: %v, want ErrEdgeOffline", err)
	}
}
