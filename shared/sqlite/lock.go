package sqlite

import "sync"

// keyedMutex serialises work per key (an order id) within this node: the
// steps of a payment, completion or refund that call a processor between
// two transactions hold the order's lock, so two terminals acting on one
// order at the same moment go one after the other and the second sees the
// first's result (and gets 409 where the state forbids its step).
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// Lock locks key and returns its unlock function.
func (k *keyedMutex) Lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
