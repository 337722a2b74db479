package pg

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// The SQLSTATE codes the engine tells apart, as it tells SQLite's
// extended codes apart today (engine/db.go: isUniqueViolation,
// isForeignKeyViolation): a unique key taken, a reference missing, and a
// unit to run again (two units' row locks in a cycle, or a serialization
// failure under REPEATABLE READ and above).
const (
	codeUnique        = "23505"
	codeForeignKey    = "23503"
	codeSerialization = "40001"
	codeDeadlock      = "40P01"
)

func hasCode(err error, codes ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	for _, c := range codes {
		if pe.Code == c {
			return true
		}
	}
	return false
}

// IsUniqueViolation reports whether err is a unique constraint's failure.
func IsUniqueViolation(err error) bool { return hasCode(err, codeUnique) }

// IsForeignKeyViolation reports whether err is a foreign key's failure.
func IsForeignKeyViolation(err error) bool { return hasCode(err, codeForeignKey) }

// IsRetryable reports whether the unit that failed with err may simply be
// run again: PostgreSQL ended it to break a deadlock or a serialization
// conflict, and nothing of it was kept.
func IsRetryable(err error) bool { return hasCode(err, codeSerialization, codeDeadlock) }
