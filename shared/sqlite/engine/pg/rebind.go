package pg

import (
	"strconv"
	"strings"
)

// Rebind rewrites a statement written for SQLite's parameters into
// PostgreSQL's: ?N becomes $N, and a bare ? becomes $k, k being one more
// than the largest number used so far (SQLite's own rule), so the same
// arguments bind alike on both. Quoted strings ('…'), quoted names ("…")
// and comments are left as they are. Shared SQL never uses jsonb's ?
// operators (it calls jsonb_exists and the like), so every ? outside
// quotes is a parameter. The statement's text is the final one (after any
// fragments were joined): the engine rewrites what it is about to run.
func Rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	highest := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := closing(q, i+1, c)
			b.WriteString(q[i:j])
			i = j
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := highest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
			}
			highest = max(highest, n)
			b.WriteString("$" + strconv.Itoa(n))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing returns the index just past the quote that closes one opened
// before from; a doubled quote is an escaped one.
func closing(q string, from int, quote byte) int {
	for i := from; i < len(q); i++ {
		if q[i] != quote {
			continue
		}
		if i+1 < len(q) && q[i+1] == quote {
			i++
			continue
		}
		return i + 1
	}
	return len(q)
}
