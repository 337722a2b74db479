package pg

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestAConnectionKeepsItsPipelinesWriteBuffer: the frontend writes a
// batch sent between sendBuf and its takeBack as it would without them,
// into the buffer the connection keeps from batch to batch (one over
// maxSendBuf is let go).
func TestAConnectionKeepsItsPipelinesWriteBuffer(t *testing.T) {
	batch := func(fe *pgproto3.Frontend, s *sendBuf, size int) {
		if s != nil {
			fe.Send(s)
		}
		fe.SendParse(&pgproto3.Parse{Name: "a", Query: "select $1"})
		fe.SendBind(&pgproto3.Bind{PreparedStatement: "a", Parameters: [][]byte{bytes.Repeat([]byte{'x'}, size)}})
		fe.SendExecute(&pgproto3.Execute{})
		fe.SendSync(&pgproto3.Sync{})
		if s != nil {
			fe.Send(s.takeBack())
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	var want, got bytes.Buffer
	plain := pgproto3.NewFrontend(bytes.NewReader(nil), &want)
	kept := pgproto3.NewFrontend(bytes.NewReader(nil), &got)
	var s sendBuf
	for i, size := range []int{10, 5000, 3000, 70000, maxSendBuf + 1, 100} {
		want.Reset()
		got.Reset()
		before := s.b
		batch(plain, nil, size)
		batch(kept, &s, size)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("batch %d (%d bytes): the frontend wrote %d bytes, want %d", i, size, got.Len(), want.Len())
		}
		switch {
		case size > maxSendBuf:
			if s.b != nil {
				t.Errorf("batch %d: a %d-byte buffer was kept", i, cap(s.b))
			}
		case cap(s.b) < got.Len():
			t.Errorf("batch %d: kept a buffer of %d bytes after writing %d", i, cap(s.b), got.Len())
		case cap(before) >= got.Len() && &before[:1][0] != &s.b[:1][0]:
			t.Errorf("batch %d: a new buffer, the kept one (%d bytes) was large enough", i, cap(before))
		}
	}
}
