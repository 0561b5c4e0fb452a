package server

// reserve returns the offset in the store of n new bytes, for writeAt.
// It is safe to call from several goroutines at once.
func (s *store) reserve(n int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.size
	s.size += n
	return at
}
