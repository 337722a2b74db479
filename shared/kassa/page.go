package kassa

// Paging defaults and bounds (CONTRACT.md).
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// Page asks for one page of a list: at most Limit items after the
// position that Cursor names ("" for the first page).
type Page struct {
	Limit  int
	Cursor string
}

// List is one page of results. NextCursor is "" when there is no further
// page, also when the total is an exact multiple of the page size.
type List[T any] struct {
	Items      []T
	HasMore    bool
	NextCursor string
}
