package cuckoo

import "sync"

// Concurrent is a Filter that is safe for concurrent use: Contains, Count,
// LoadFactor, MarshalBinary and the other methods that only read share a
// read lock, the others take the write lock. Keys are hashed outside the
// lock.
//
// The zero Concurrent, like the zero Filter, has no room and is ready for
// UnmarshalBinary. A Concurrent must not be copied after first use.
type Concurrent struct {
	mu sync.RWMutex
	f  Filter
}

// NewConcurrent returns an empty Concurrent with the capacity and
// configuration New takes.
func NewConcurrent(capacity int, cfg Config) (*Concurrent, error) {
	f, err := New(capacity, cfg)
	if err != nil {
		return nil, err
	}
	return &Concurrent{f: *f}, nil
}

// Insert is Filter.Insert.
func (c *Concurrent) Insert(key []byte) error { return c.InsertHash(Hash(key)) }

// InsertHash is Filter.InsertHash.
func (c *Concurrent) InsertHash(h uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.InsertHash(h)
}

// Contains is Filter.Contains.
func (c *Concurrent) Contains(key []byte) bool { return c.ContainsHash(Hash(key)) }

// ContainsHash is Filter.ContainsHash.
func (c *Concurrent) ContainsHash(h uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.ContainsHash(h)
}

// Delete is Filter.Delete.
func (c *Concurrent) Delete(key []byte) bool { return c.DeleteHash(Hash(key)) }

// DeleteHash is Filter.DeleteHash.
func (c *Concurrent) DeleteHash(h uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.DeleteHash(h)
}

// Count is Filter.Count.
func (c *Concurrent) Count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.Count()
}

// LoadFactor is Filter.LoadFactor.
func (c *Concurrent) LoadFactor() float64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.LoadFactor()
}

// Buckets is Filter.Buckets.
func (c *Concurrent) Buckets() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.Buckets()
}

// Config is Filter.Config.
func (c *Concurrent) Config() Config {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.Config()
}

// Reset is Filter.Reset.
func (c *Concurrent) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.Reset()
}

// MarshalBinary is Filter.MarshalBinary.
func (c *Concurrent) MarshalBinary() ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.MarshalBinary()
}

// UnmarshalBinary is Filter.UnmarshalBinary.
func (c *Concurrent) UnmarshalBinary(data []byte) error {
	g, err := decode(data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f = g
	return nil
}
