package gate

import (
	"bytes"
	"container/list"
	"sync"
	"time"
)

// terminalCache keeps recent done and failed records of this instance, so a
// repeated duplicate skips the store. It never holds a claimed record: only
// terminal states are final until expires_at.
type terminalCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *cacheEntry
	byKey map[string]*list.Element
}

type cacheEntry struct {
	rec   Record
	until time.Time
}

func newTerminalCache(size int) *terminalCache {
	if size <= 0 {
		return nil
	}
	return &terminalCache{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns a copy of the cached terminal record of key, if fresh at now.
func (c *terminalCache) get(key string, now time.Time) (Record, bool) {
	if c == nil {
		return Record{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return Record{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.until) {
		c.order.Remove(el)
		delete(c.byKey, key)
		return Record{}, false
	}
	c.order.MoveToFront(el)
	rec := e.rec // the caller's own: it reaches Do's decoder, Result and RecordError
	rec.Result, rec.Fingerprint = bytes.Clone(rec.Result), bytes.Clone(rec.Fingerprint)
	return rec, true
}

// put caches rec until until; non-terminal records are ignored.
func (c *terminalCache) put(rec Record, until time.Time) {
	if c == nil || (rec.State != StateDone && rec.State != StateFailed) {
		return
	}
	rec.Result = bytes.Clone(rec.Result)
	rec.Fingerprint = bytes.Clone(rec.Fingerprint)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[rec.Key]; ok {
		el.Value = &cacheEntry{rec: rec, until: until}
		c.order.MoveToFront(el)
		return
	}
	c.byKey[rec.Key] = c.order.PushFront(&cacheEntry{rec: rec, until: until})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).rec.Key)
	}
}
