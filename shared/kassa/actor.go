package kassa

// Ref is who a record names as having made a change: the user, or for a
// partner app's token without a user the OAuth client; empty for neither
// (the node itself).
func (a *Actor) Ref() string {
	if a.UserID != "" {
		return a.UserID
	}
	return a.ClientID
}
